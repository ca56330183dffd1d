// docs/api.md "Permissions by route" is generated from the route table (lib/http/permission-doc.ts,
// `npm run -s docs:permissions`): this fails when the file's table differs from what the table
// generates, so the documented permissions cannot drift from what the gate checks.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { BEGIN, END, renderPermissionTable, withPermissionTable } from '../lib/http/permission-doc.js';
import { API_DOC_PATH } from '../lib/cli/permission-doc.js';
import { ROUTES } from '../lib/http/routes.js';
describe('docs/api.md: the permission of every route', () => {
    const doc = readFileSync(API_DOC_PATH, 'utf8');
    it('holds the table the route table generates (run npm run -s docs:permissions after changing a permission)', () => {
        expect(doc.includes(BEGIN) && doc.includes(END), 'the marker comments').to.equal(true);
        expect(withPermissionTable(doc) === doc, 'docs/api.md differs from the generated table: run npm run -s docs:permissions').to.equal(true);
    });
    it('has one row per route, naming its permission', () => {
        const table = renderPermissionTable();
        const rows = table.split('\n').slice(2);
        expect(rows).to.have.length(ROUTES.length);
        ROUTES.forEach((r, i) => expect(rows[i], r.operation).to.match(new RegExp(`^\\| \`${r.operation.replace(/\./g, '\\.')}\` \\| \`${r.method} [^\`]+\` \\| ${r.permission}`)));
    });
    it('notices a changed permission', () => {
        const changed = ROUTES.map((r) => (r.operation === 'tasks.create' ? { ...r, permission: 'reader' } : r));
        expect(withPermissionTable(doc, renderPermissionTable(changed))).to.not.equal(doc);
    });
});
//# sourceMappingURL=permission-doc.test.js.map