// `cairn repo rules` and `cairn land --bypass` against a real server whose ingress names callers
// (CAIRN_IDENTITY_HEADER, CAIRN_USER): show the defaults, set some rules (the others kept), a bad
// value refused (exit 1, nothing changed), a usage error (exit 2), and a land refused by a rule
// (exit 6) then landed with --bypass by a caller in bypass_allowed.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, cli, register, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const H = 'X-Remote-User';
describe('rules commands', function () {
    this.timeout(60_000);
    let s;
    let repo;
    let common;
    const as = (who) => ({ CAIRN_IDENTITY_HEADER: H, CAIRN_USER: who });
    before(async () => {
        s = await startTestServer(undefined, { identity: { header: H } });
        repo = await register(s.url, 'rules-cli');
        common = ['--server', s.url, '--repo', String(repo)];
    });
    after(() => s.stop());
    it('shows the rules, sets some (keeping the others), refuses a bad value (exit 1) and a bad flag (exit 2)', async () => {
        const shown = await cli(['repo', 'rules', ...common, '--json']);
        expect(shown.code, shown.stderr).to.equal(0);
        expect(JSON.parse(shown.stdout)).to.deep.include({ updated_at_s: null, updated_by: null });
        const set = await cli(['repo', 'rules', 'set', ...common, '--required-approvals', '1', '--bypass-allowed', 'root, ops', '--json'], as('admin'));
        expect(set.code, set.stderr).to.equal(0);
        const rules = JSON.parse(set.stdout);
        expect(rules.rules).to.deep.include({ required_approvals: 1, require_ci: true, bypass_allowed: ['root', 'ops'], land_allowed: [] });
        expect(rules.updated_by).to.equal('admin');
        const more = await cli(['repo', 'rules', 'set', ...common, '--code-owners', 'on', '--dismiss-stale', 'off', '--json'], as('admin'));
        expect(JSON.parse(more.stdout).rules).to.deep.include({ required_approvals: 1, require_code_owners: true, dismiss_stale_approvals: false });
        const text = await cli(['repo', 'rules', ...common]);
        expect(text.code, text.stderr).to.equal(0);
        const bad = await cli(['repo', 'rules', 'set', ...common, '--land-allowed', 'a,a'], as('admin'));
        expect(bad.code, bad.stderr).to.equal(1);
        expect(bad.stderr).to.match(/names "a" twice/);
        const usage = await cli(['repo', 'rules', 'set', ...common, '--require-ci', 'maybe']);
        expect(usage.code).to.equal(2);
        const nothing = await cli(['repo', 'rules', 'set', ...common]);
        expect(nothing.code).to.equal(2);
        const after = await cli(['repo', 'rules', ...common, '--json']);
        expect(JSON.parse(after.stdout).rules).to.deep.equal({ ...rules.rules, require_code_owners: true, dismiss_stale_approvals: false });
        await cli(['repo', 'rules', 'set', ...common, '--code-owners', 'off', '--require-ci', 'off'], as('admin'));
    });
    it('cairn land: refused by a rule (exit 6), refused a bypass it may not make, then landed with --bypass by root', async () => {
        const dir = path.join(tempDir(), 'tree');
        await fsp.mkdir(dir, { recursive: true });
        await fsp.writeFile(path.join(dir, 'a.txt'), 'one\n');
        const push = await cli(['push', ...common, '--line', 'dev', dir]);
        expect(push.code, push.stderr).to.equal(0);
        const base = JSON.parse(push.stdout).snapshot_id;
        await fsp.writeFile(path.join(dir, 'a.txt'), 'two\n');
        const rev = JSON.parse((await cli(['push', ...common, '--no-line', '--parent', base, dir])).stdout).snapshot_id;
        const post = async (rest, json) => (await api(s.url, 'POST', R(repo, rest), { json })).json;
        const t = (await post('/tasks', { title: 'T', intent: 'i' })).task;
        const c = (await post('/changes', { task_id: t.task_id, title: 'C', base_line: 'dev' })).change;
        const ps = (await post(`/changes/${c.change_id}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only', author: 'alice' })).patchset;
        await api(s.url, 'PUT', R(repo, `/patchsets/${ps.patchset_id}/attestation`), { json: { verification_state: 'pass', require_tests_pass: false } });
        const blocked = await cli(['land', ...common, c.change_ref], as('alice'));
        expect(blocked.code, blocked.stderr).to.equal(6);
        expect(blocked.stdout).to.include('approvals_required');
        const denied = await cli(['land', ...common, '--bypass', c.change_ref], as('alice'));
        expect(denied.code).to.equal(1);
        expect(denied.stderr).to.match(/alice may not bypass the rules of this repository/);
        const landed = await cli(['land', ...common, '--bypass', c.change_ref], as('root'));
        expect(landed.code, landed.stderr + landed.stdout).to.equal(0);
        const j = JSON.parse(landed.stdout);
        expect(j.land).to.include({ status: 'landed', bypassed_by: 'root', landed_by: 'root' });
    });
});
//# sourceMappingURL=rules-cli.test.js.map