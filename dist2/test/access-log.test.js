// DATA/access.log byte for byte (storage-layout.md §21): the golden file, the fold the access
// book builds from it, a torn tail cut at open, damage before the end reported and never cut.
import { expect } from 'chai';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { encodeLog } from '../lib/store/framed-log.js';
import { Layout, MAGIC } from '../lib/store/layout.js';
import { checkAccessLog } from '../lib/store/access-log.js';
import { AccessBook } from '../lib/authority/access.js';
import { tokenDigest } from '../lib/domain/access.js';
import { FIXTURES, tempDir } from './helpers.js';
const TOKEN = `cairn_${'b'.repeat(43)}`;
const RECORDS = [
    { seq: 1, at_s: 1767225600, type: 'account.added', actor: null, name: 'alice', server_admin: true, source: 'admin' },
    { seq: 2, at_s: 1767225601, type: 'account.added', actor: 'alice', name: 'bob', server_admin: false, source: 'admin' },
    { seq: 3, at_s: 1767225602, type: 'token.created', actor: 'alice', token_id: 'token-1', account: 'bob', name: 'laptop', scopes: ['read', 'write'], expires_at_s: 4102444800, digest: tokenDigest(TOKEN) },
    { seq: 4, at_s: 1767225603, type: 'group.set', actor: 'alice', name: 'core', members: ['bob'] },
    { seq: 5, at_s: 1767225604, type: 'access.changed', actor: 'alice', repository_index: 1, grant: [{ subject: 'group:core', role: 'maintainer' }], revoke: [], anonymous_read: true },
    { seq: 6, at_s: 1767225605, type: 'audit', actor: 'alice', action: 'repository.purged', repository_index: 2 },
];
const GOLDEN = path.join(FIXTURES, 'access-log-v1.bin');
function dataDirWith(bytes) {
    const dir = path.join(tempDir(), 'data');
    mkdirSync(dir, { recursive: true });
    writeFileSync(new Layout(dir).accessLogFile, bytes);
    return dir;
}
describe('access.log (storage-layout.md §21)', () => {
    it('encodes the golden file byte for byte', () => {
        const bytes = encodeLog(MAGIC.accessLog, RECORDS.map((r) => Buffer.from(JSON.stringify(r), 'utf8')));
        expect(bytes.subarray(0, 12).toString('latin1')).to.equal('CAIRNACC\0\0\0\0');
        expect(bytes.equals(readFileSync(GOLDEN))).to.equal(true);
    });
    it('folds into accounts, tokens, groups and grants', async () => {
        const dir = path.join(tempDir(), 'data');
        mkdirSync(dir, { recursive: true });
        copyFileSync(GOLDEN, new Layout(dir).accessLogFile);
        const book = AccessBook.open(new Layout(dir));
        try {
            expect(book.listAccounts().map((a) => [a.name, a.server_admin])).to.deep.equal([['alice', true], ['bob', false]]);
            const bob = book.authenticate(TOKEN, 1767225700);
            expect(bob).to.include({ kind: 'account', name: 'bob', tokenId: 'token-1' });
            // bob is a maintainer of 1 through group core; anyone reads 1; nobody but an admin has 2.
            expect(book.roleIn(bob, 1)).to.equal('maintainer');
            expect(book.roleIn({ kind: 'anonymous' }, 1)).to.equal('reader');
            expect(book.roleIn(bob, 2)).to.equal(null);
            expect(book.authenticate(TOKEN, 4102444800)).to.equal(null); // expired
            expect(book.auditPage(0, 10).records.map((r) => r.type)).to.deep.equal(RECORDS.map((r) => r.type));
            expect(JSON.stringify(book.auditPage(0, 10))).to.not.include('digest');
            // The next token continues the numbering, and its text is nowhere in the log.
            const made = await book.createToken('alice', 'alice', 'ci');
            expect(made.info.token_id).to.equal('token-2');
            expect(readFileSync(new Layout(dir).accessLogFile).includes(made.token)).to.equal(false);
        }
        finally {
            await book.close();
        }
    });
    it('cuts a torn last record at open (and fsck notes it), keeping every whole one', () => {
        const whole = readFileSync(GOLDEN);
        const torn = Buffer.concat([whole, Buffer.from([200, 0, 0, 0, 0x7b, 0x22])]);
        const dir = dataDirWith(torn);
        const check = checkAccessLog(new Layout(dir).accessLogFile);
        expect(check.problems).to.deep.equal([]);
        expect(check.notes.join()).to.match(/cuts/);
        const notes = [];
        const book = AccessBook.open(new Layout(dir), notes);
        expect(notes.join()).to.match(/cut/);
        expect(book.listAccounts()).to.have.length(2);
        void book.close();
        expect(readFileSync(new Layout(dir).accessLogFile).equals(whole)).to.equal(true);
    });
    it('reports damage before the end and cuts nothing', () => {
        const bytes = Buffer.from(readFileSync(GOLDEN));
        bytes[12 + 4 + 10] ^= 0xff; // inside the first record's body
        const dir = dataDirWith(bytes);
        expect(checkAccessLog(new Layout(dir).accessLogFile).problems.join()).to.match(/checksum/);
        expect(() => AccessBook.open(new Layout(dir))).to.throw(/checksum/);
        expect(readFileSync(new Layout(dir).accessLogFile).equals(bytes)).to.equal(true);
    });
});
//# sourceMappingURL=access-log.test.js.map