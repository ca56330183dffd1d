// `cairn land` and `cairn task start` against a real server: the printed idempotency key and its
// reuse (replay), refusals (exit 6) naming the failure kind and, for a conflict, the paths. The
// landing runs cross the real HTTP routes of an in-process server whose LandDesk was built with
// an injected passing gate function (modes and output apart from the evidence); the first land
// runs with the real gates (blocked_by_policy).
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { api, cli, register, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
describe('land commands', function () {
    this.timeout(60_000);
    let s;
    let repo;
    let common;
    before(async () => {
        s = await startTestServer();
        repo = await register(s.url, 'land-cli');
        common = ['--server', s.url, '--repo', String(repo)];
    });
    after(() => s.stop());
    it('task start → patchset → land: refused by policy, then (gates passing) a conflict with paths, then a landed ff-only and its replay', async () => {
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\n');
        const push = await cli(['push', ...common, '--line', 'dev', dir]);
        expect(push.code, push.stderr).to.equal(0);
        const base = JSON.parse(push.stdout).snapshot_id;
        const planFile = path.join(tempDir(), 'plan.md');
        await fsp.writeFile(planFile, '# Sprint\n- [ ] do it {#do}\n');
        const started = await cli(['task', 'start', ...common, '--item', 'do', '--title', 'Do', '--intent', 'it', '--change-title', 'impl', '--base-line', 'dev', '--create', planFile, '--artifact-path', 'plan.md']);
        expect(started.code, started.stderr).to.equal(0);
        expect(started.stderr).to.match(/idempotency key: cli-/);
        const st = JSON.parse(started.stdout);
        expect(st).to.include({ contract: 'task-start-atomic/v1', replay: false, task_id: 'task-1', change_id: 'change-1', plan_item_ref: 'do' });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'two\n');
        const ps = await cli(['patchset', 'push', ...common, '--change', 'change-1', dir]);
        expect(ps.code, ps.stderr).to.equal(0);
        const blocked = await cli(['land', ...common, '--mode', 'ff-only', 'task-1']);
        expect(blocked.code, blocked.stderr).to.equal(6);
        expect(JSON.parse(blocked.stdout).failure_kind).to.equal('blocked_by_policy');
        const a = await (await s.ready).opened(repo);
        a.lands = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
        // move dev so that a merge conflicts on a.txt
        await fsp.writeFile(path.join(dir, 'a.txt'), 'three\n');
        const moved = await cli(['push', ...common, '--line', 'dev', '--parent', base, dir]);
        expect(moved.code, moved.stderr).to.equal(0);
        const conflict = await cli(['land', ...common, '--mode', 'merge', 'task-1.change-1']);
        expect(conflict.code).to.equal(6);
        const cj = JSON.parse(conflict.stdout);
        expect(cj.failure_kind).to.equal('conflict');
        expect(cj.land.conflicts).to.deep.equal([{ path: 'a.txt', kind: 'content' }]);
        // put dev back on the base (a non-governed line moves freely), then ff-only lands
        expect((await api(s.url, 'PUT', R(repo, '/lines/dev'), { json: { head_snapshot_id: base } })).status).to.equal(200);
        const landed = await cli(['land', ...common, '--mode', 'ff-only', '--idempotency-key', 'k-1', 'task-1']);
        expect(landed.code, landed.stderr + landed.stdout).to.equal(0);
        const lj = JSON.parse(landed.stdout);
        expect(lj).to.include({ replay: false, change_id: 'change-1', target_line: 'dev' });
        const again = await cli(['land', ...common, '--mode', 'ff-only', '--idempotency-key', 'k-1', 'task-1']);
        expect(again.code).to.equal(0);
        expect(JSON.parse(again.stdout)).to.deep.equal({ ...lj, replay: true });
        expect((await api(s.url, 'GET', R(repo, '/lines/dev'))).json.head_snapshot_id).to.equal(lj.landed_snapshot_id);
    });
});
//# sourceMappingURL=land-cli.test.js.map