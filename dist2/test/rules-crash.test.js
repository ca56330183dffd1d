// kill -9 around a change of repository rules (docs/api.md "Repository rules"): a child server
// is killed before the change stages anything and at each step of its commit
// (CAIRN_TEST_CRASH_AT=`rules:set>commit:<step>`, lib/store/crash-point.ts). After a restart the
// rules read back either entirely as before or entirely as set — never some fields of each —
// with the `rules.changed` event exactly when the new rules are there.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, cli, ok, register, spawnServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const OLD = { required_approvals: 1, require_code_owners: false, dismiss_stale_approvals: true, require_ci: true, require_resolved_threads: false, land_allowed: ['maint'], bypass_allowed: [] };
const NEW = { required_approvals: 3, require_code_owners: true, dismiss_stale_approvals: false, require_ci: false, require_resolved_threads: true, land_allowed: ['a', 'b'], bypass_allowed: ['root'] };
describe('repository rules: kill -9 around a rule change', function () {
    this.timeout(180_000);
    const template = path.join(tempDir(), 'data');
    const spawned = [];
    let repo;
    before(async () => {
        const s = await spawnServer(template);
        spawned.push(s);
        repo = await register(s.url, 'rules-crash');
        await ok(api(s.url, 'PUT', R(repo, '/rules'), { json: { rules: OLD } }));
        s.proc.kill('SIGTERM');
        await s.exited;
    });
    after(async () => {
        for (const s of spawned)
            if (s.proc.exitCode === null && s.proc.signalCode === null) {
                s.proc.kill('SIGKILL');
                await s.exited;
            }
    });
    const observe = async (url) => {
        const rules = (await ok(api(url, 'GET', R(repo, '/rules')))).rules;
        const changed = (await ok(api(url, 'GET', R(repo, '/events?limit=1000&types=rules.changed')))).events.length;
        return { rules, changed };
    };
    for (const point of ['rules:set', 'rules:set>commit:after-log', 'rules:set>commit:before-state', 'rules:set>commit:after-state']) {
        it(`killed at ${point}: after a restart the rules are all old or all new`, async () => {
            const data = path.join(tempDir(), 'data');
            await fsp.cp(template, data, { recursive: true });
            const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
            spawned.push(doomed);
            const before = await observe(doomed.url);
            expect(before).to.deep.equal({ rules: OLD, changed: 1 });
            const put = api(doomed.url, 'PUT', R(repo, '/rules'), { json: { rules: NEW } }).then((r) => r, (err) => err);
            const code = await Promise.race([doomed.exited, sleep(15_000).then(() => 'alive')]);
            if (code === 'alive')
                expect.fail(`the server was not killed at ${point}: ${doomed.output().slice(-2000)}`);
            expect(code, 'killed by SIGKILL').to.equal(null);
            const answer = await put;
            expect(answer instanceof Error || answer.status === undefined, 'no answer from a killed server').to.equal(true);
            const restarted = await spawnServer(data);
            spawned.push(restarted);
            const after = await observe(restarted.url);
            // Only a kill after the commit point keeps the change.
            if (point.endsWith('after-state'))
                expect(after).to.deep.equal({ rules: NEW, changed: 2 });
            else
                expect(after).to.deep.equal({ rules: OLD, changed: 1 });
            restarted.proc.kill('SIGTERM');
            await restarted.exited;
            const fsck = await cli(['fsck', '--data', data]);
            expect(fsck.code, fsck.stdout + fsck.stderr).to.equal(0);
        });
    }
});
//# sourceMappingURL=rules-crash.test.js.map