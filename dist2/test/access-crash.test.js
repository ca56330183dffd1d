// access.log across a crash (storage-layout.md §21): a server killed with SIGKILL while accounts
// are being added keeps every one it acknowledged, and the log opens; a torn last record (half
// an append, written here by hand as a crash would leave it) is cut at open and reported by
// `checkAccessLog` as a note, not a problem.
import { expect } from 'chai';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AccessBook } from '../lib/authority/access.js';
import { checkAccessLog } from '../lib/store/access-log.js';
import { Layout } from '../lib/store/layout.js';
import { scanRecords } from '../lib/store/framed-log.js';
import { api, spawnServer, tempDir } from './helpers.js';
import { seedAdmin } from './access-seed.js';
describe('access.log across a crash', function () {
    this.timeout(120_000);
    const dataDir = path.join(tempDir(), 'data');
    const layout = new Layout(dataDir);
    let root;
    const acknowledged = [];
    const granted = [];
    let repo;
    before(async () => {
        root = await seedAdmin(dataDir, 'root');
    });
    async function listed(server) {
        const res = await api(server.url, 'GET', '/v1/native/accounts', { headers: root.headers });
        expect(res.status, res.text).to.equal(200);
        return new Set(res.json.accounts.map((a) => a.name));
    }
    async function grantsOf(server) {
        const res = await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/access`, { headers: root.headers });
        expect(res.status, res.text).to.equal(200);
        return new Set(res.json.grants.map((g) => g.subject));
    }
    it('keeps every acknowledged grant and account after a SIGKILL in the middle of writing them, and opens', async () => {
        const server = await spawnServer(dataDir, ['--auth', 'tokens']);
        const reg = await api(server.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'crash', namespace: '', policy_flags: 0 }, headers: root.headers });
        expect(reg.status, reg.text).to.be.oneOf([200, 201]);
        repo = reg.json.repository.repository_index;
        let killed = false;
        // Four writers (two granting roles, two adding accounts) keep requests in flight, so the kill lands while appends are under way.
        const writer = async (w) => {
            for (let i = 0; !killed; i++) {
                const name = `w${w}-${i}`;
                try {
                    if (w < 2) {
                        const res = await api(server.url, 'PATCH', `/v1/native/repository-authorities/${repo}/access`, { json: { grant: [{ subject: `user:${name}`, role: 'reader' }] }, headers: root.headers, contract: false });
                        if (res.status === 200)
                            granted.push(`user:${name}`);
                    }
                    else {
                        const res = await api(server.url, 'POST', '/v1/native/accounts', { json: { name }, headers: root.headers, contract: false });
                        if (res.status === 201)
                            acknowledged.push(name);
                    }
                }
                catch {
                    return; // the connection died with the server
                }
            }
        };
        const writers = [0, 1, 2, 3].map(writer);
        while (acknowledged.length + granted.length < 60)
            await new Promise((r) => setImmediate(r));
        server.proc.kill('SIGKILL');
        killed = true;
        await server.exited;
        await Promise.all(writers);
        const check = checkAccessLog(layout.accessLogFile);
        expect(check.problems).to.deep.equal([]);
        const again = await spawnServer(dataDir, ['--auth', 'tokens']);
        try {
            const names = await listed(again);
            for (const name of acknowledged)
                expect(names.has(name), name).to.equal(true);
            const grants = await grantsOf(again);
            expect(granted.length).to.be.greaterThan(0);
            for (const subject of granted)
                expect(grants.has(subject), subject).to.equal(true);
        }
        finally {
            again.proc.kill('SIGTERM');
            await again.exited;
        }
    });
    it('cuts a torn last record at open (a note of checkAccessLog, not a problem), keeping every record before it', async () => {
        const file = layout.accessLogFile;
        const whole = readFileSync(file);
        // Half of an append as a crash would leave it: the first half of the file's last record written again at its end.
        const book = AccessBook.open(layout);
        const before = book.listAccounts().map((a) => a.name);
        await book.close();
        const lastStart = lastRecordOffset(file);
        const torn = whole.subarray(lastStart, lastStart + Math.max(1, Math.floor((whole.length - lastStart) / 2)));
        const fd = openSync(file, 'a');
        writeSync(fd, torn);
        closeSync(fd);
        expect(statSync(file).size).to.equal(whole.length + torn.length);
        const check = checkAccessLog(file);
        expect(check.problems).to.deep.equal([]);
        expect(check.notes.join('\n')).to.match(/access\.log/);
        expect(check.notes).to.have.length(1);
        const notes = [];
        const reopened = AccessBook.open(layout, notes);
        try {
            expect(notes.join('\n')).to.match(/access\.log/);
            expect(reopened.listAccounts().map((a) => a.name)).to.deep.equal(before);
            // Appends go on after the cut, and the file is whole again.
            await reopened.addAccount(null, 'after-the-cut', false);
        }
        finally {
            await reopened.close();
        }
        expect(checkAccessLog(file)).to.deep.equal({ problems: [], notes: [] });
        const server = await spawnServer(dataDir, ['--auth', 'tokens']);
        try {
            const names = await listed(server);
            for (const name of [...acknowledged, 'after-the-cut'])
                expect(names.has(name), name).to.equal(true);
        }
        finally {
            server.proc.kill('SIGTERM');
            await server.exited;
        }
    });
});
/** The byte offset of the last record of access.log (from the frames' own offsets). */
function lastRecordOffset(file) {
    const fd = openSync(file, 'r');
    try {
        let last = -1;
        for (const rec of scanRecords(fd, statSync(file).size, 'access.log'))
            last = rec.offset;
        if (last < 0)
            throw new Error('access.log has no record');
        return last;
    }
    finally {
        closeSync(fd);
    }
}
//# sourceMappingURL=access-crash.test.js.map