// Tests of the archive (restore, follow): a small history written over HTTP, and the reads
// compared byte for byte between an original server and a restored or following one.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, ok, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
export /** Build a small history in repository `repo` of the server at `url`: two snapshots, a task and a change. */ async function write(url, repo, round) {
    const dir = tempDir();
    await fsp.writeFile(path.join(dir, 'a.txt'), `round ${round}\none\ntwo\n`);
    await fsp.mkdir(path.join(dir, 'sub'));
    await fsp.writeFile(path.join(dir, 'sub', 'b.bin'), Buffer.alloc(5000, round));
    const base = (await push({ server: url, repo, line: 'dev', dir, moveLine: true, progress: false })).snapshot_id;
    await fsp.writeFile(path.join(dir, 'a.txt'), `round ${round}\nONE\ntwo\n`);
    const rev = (await push({ server: url, repo, line: 'dev', dir, moveLine: false, progress: false, parent: base })).snapshot_id;
    const post = (p, json) => ok(api(url, 'POST', R(repo, p), { json }));
    const t = (await post('/tasks', { title: `T${round}`, intent: 'i' })).task;
    const change = (await post('/changes', { task_id: t.task_id, title: `C${round}`, base_line: 'dev' })).change.change_id;
    await post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' });
}
/** The reads compared before and after: raw response bodies, by request. */
export async function reads(url, repo) {
    const out = {};
    const get = async (p) => {
        const res = await api(url, 'GET', p);
        expect(res.status, `${p}: ${res.text}`).to.equal(200);
        out[p] = res.text;
        return res.text;
    };
    await get(R(repo));
    const lines = JSON.parse(await get(R(repo, '/lines')));
    const main = JSON.parse(await get(R(repo, '/lines/dev')));
    expect(lines.lines ?? lines.items ?? lines).to.not.equal(undefined);
    const head = main.head_snapshot_id ?? main.line?.head_snapshot_id;
    await get(R(repo, `/snapshots/${head}`));
    await get(R(repo, `/read/snapshots/${head}/files/a.txt`));
    await get(R(repo, '/tasks'));
    const changes = JSON.parse(await get(R(repo, '/changes')));
    const first = (changes.changes ?? changes.items)[0];
    await get(R(repo, `/changes/${first.change_id}`));
    await get(R(repo, '/events'));
    return out;
}
//# sourceMappingURL=archive-reads.js.map