// The commit handler's plain-loop check of a body (isCommitBody) must never accept what the
// superstruct schema refuses, and should accept everything it accepts (else the fast path is lost).
import { expect } from 'chai';
import fc from 'fast-check';
import { Unprocessable } from '../lib/domain/errors.js';
import { isCommitBody, validateCommitBody } from '../lib/http/handlers/content.js';
const hex = (c) => c.repeat(64);
const locator = (idKey) => ({ [idKey]: hex('a'), pack_id: hex('b'), offset: 10, length: 5, raw_length: 7, crc32: '0000abcd' });
const valid = () => ({
    contract: 'svc.remote_sync.zstd_bulk.commit.v1',
    object_packs: [hex('b'), { pack_id: hex('c'), byte_length: 100, object_count: 2 }, { pack_id: hex('d') }],
    tree_packs: [{ pack_id: hex('e') }],
    blob_locators: [locator('blob_id'), locator('blob_id')],
    tree_locators: [locator('tree_id')],
    snapshots: [{ snapshot_id: hex('f'), root_tree_id: hex('a'), parent_snapshot_ids: [hex('1')], created_at_s: 5, message: 'm' }],
    line_update: { line_name: 'dev', head_snapshot_id: hex('f'), expected_head_snapshot_id: null },
    extra: { anything: [1] },
});
/** Every path to a value inside `v` (objects and arrays), the root excluded. */
function paths(v, at = []) {
    if (typeof v !== 'object' || v === null)
        return [];
    const out = [];
    for (const [k, child] of Object.entries(v)) {
        const p = [...at, Array.isArray(v) ? Number(k) : k];
        out.push(p, ...paths(child, p));
    }
    return out;
}
function accepted(body) {
    try {
        return { value: validateCommitBody(body) };
    }
    catch (err) {
        expect(err).to.be.instanceOf(Unprocessable);
        return null;
    }
}
describe('commit body check', () => {
    it('agrees with the superstruct schema on valid bodies and on every single-value mutation of one', () => {
        const replacements = [undefined, null, 'x', '', 0, -1, 1.5, 2 ** 60, true, [], [1], ['x'], {}, { pack_id: 'x' }, [{}]];
        const base = valid();
        expect(isCommitBody(base)).to.equal(true);
        expect(accepted(base)).to.deep.equal({ value: base });
        let checked = 0;
        for (const p of paths(base)) {
            for (const r of replacements) {
                const body = structuredClone(base);
                let parent = body;
                for (const k of p.slice(0, -1))
                    parent = parent[k];
                const last = p[p.length - 1];
                if (r === undefined && !Array.isArray(parent))
                    delete parent[last];
                else
                    parent[last] = r;
                const ours = isCommitBody(body);
                const theirs = accepted(body);
                expect(ours, `${p.join('.')} = ${JSON.stringify(r)}`).to.equal(theirs !== null);
                if (theirs)
                    expect(theirs).to.deep.equal({ value: body });
                checked++;
            }
        }
        expect(checked).to.be.greaterThan(500);
    });
    it('agrees with the superstruct schema on arbitrary JSON', () => {
        const loose = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 3 }));
        const row = fc.record({ blob_id: fc.oneof(fc.string(), loose), tree_id: fc.oneof(fc.string(), loose), pack_id: fc.oneof(fc.string(), loose), offset: fc.oneof(fc.nat(), loose), length: fc.nat(), raw_length: fc.oneof(fc.nat(), loose), crc32: fc.string() }, { requiredKeys: [] });
        const rows = fc.oneof(fc.constant(undefined), fc.constant(null), fc.array(fc.oneof(row, fc.string(), loose), { maxLength: 4 }), loose);
        const body = fc.record({
            contract: fc.oneof(fc.string(), loose),
            object_packs: rows,
            tree_packs: rows,
            blob_locators: rows,
            tree_locators: rows,
            snapshots: fc.oneof(rows, fc.array(fc.record({ snapshot_id: fc.string(), root_tree_id: fc.string(), parent_snapshot_ids: fc.oneof(fc.array(fc.oneof(fc.string(), loose)), loose), created_at_s: fc.oneof(fc.nat(), loose), message: fc.oneof(fc.string(), loose) }, { requiredKeys: ['snapshot_id', 'root_tree_id'] }), { maxLength: 2 })),
            line_update: fc.oneof(loose, fc.record({ line_name: fc.oneof(fc.string(), loose), head_snapshot_id: fc.oneof(fc.string(), loose), expected_head_snapshot_id: fc.oneof(fc.string(), loose) }, { requiredKeys: [] })),
        }, { requiredKeys: [] });
        fc.assert(fc.property(fc.oneof(body, loose, fc.array(loose)), (b) => {
            const json = JSON.parse(JSON.stringify(b) ?? 'null');
            const theirs = accepted(json);
            expect(isCommitBody(json)).to.equal(theirs !== null);
            if (theirs)
                expect(theirs).to.deep.equal({ value: json });
        }), { numRuns: 2000 });
    });
});
//# sourceMappingURL=commit-body.test.js.map