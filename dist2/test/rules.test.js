// Repository rules (docs/api.md "Repository rules"), over real HTTP with callers named by the
// trusted ingress's header: the rules API and its validation, approvals that must come from
// someone other than the author, code owners (CODEOWNERS in the target head, groups through the
// injected membership, owners asked on each new patchset, an invalid file reported), stale
// approvals dismissed or carried, require_ci off, who may land and who may bypass, the land
// queue's admission, and the team defaults a server may give new repositories.
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { parseCodeOwners, ownersOf } from '../lib/domain/workflow/codeowners.js';
import { approvalsRequirement, DEFAULT_RULES, rulesRecordProblems, TEAM_DEFAULT_RULES } from '../lib/domain/workflow/repo-rules.js';
import pino from 'pino';
import { CairnService } from '../lib/authority/service.js';
import { api, exportRepo, register, restoreRepo, startTestServer, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const H = 'X-Remote-User';
const SECRET = 'a-long-enough-shared-secret';
const as = (who) => (who ? { [H]: who, 'X-Cairn-Ingress-Secret': SECRET } : {});
async function ok(res, what = '') {
    const r = await res;
    if (r.status >= 300)
        throw new Error(`${what}: ${r.status} ${r.text}`);
    return r.json;
}
const GROUPS = { 'team-core': ['erin', 'frank'], admins: ['root'] };
class Repo {
    s;
    repo;
    dir = path.join(tempDir(), 'tree');
    constructor(s, repo) {
        this.s = s;
        this.repo = repo;
    }
    call(method, rest, json, who) {
        return api(this.s.url, method, R(this.repo, rest), { ...(json !== undefined ? { json } : {}), headers: as(who) });
    }
    async snap(files, moveLine, parent) {
        await fsp.rm(this.dir, { recursive: true, force: true });
        for (const [p, v] of Object.entries(files)) {
            await fsp.mkdir(path.dirname(path.join(this.dir, p)), { recursive: true });
            await fsp.writeFile(path.join(this.dir, p), v);
        }
        return (await push({ server: this.s.url, repo: this.repo, line: 'main', dir: this.dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
    }
    /** A change by `author` from `base` to `files`, attested (tests required by default). */
    async change(base, files, author = 'alice', attestation = { verification_state: 'pass' }) {
        const revision = await this.snap(files, false, base);
        const t = (await ok(this.call('POST', '/tasks', { title: 'T', intent: 'I' }), 'task')).task;
        const c = (await ok(this.call('POST', '/changes', { task_id: t.task_id, title: 'C', base_line: 'main' }), 'change')).change;
        const ps = await this.patchset(c.change_id, base, revision, author, attestation);
        return { change: c.change_id, ref: c.change_ref, ps, revision };
    }
    async patchset(change, base, revision, author, attestation = { verification_state: 'pass' }) {
        const p = (await ok(this.call('POST', `/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary: 's', author_mode: 'human_only', author }), 'patchset')).patchset;
        await ok(this.call('PUT', `/patchsets/${p.patchset_id}/attestation`, attestation), 'attest');
        return p.patchset_id;
    }
    async select(change, ps) {
        await ok(this.call('POST', `/changes/${change}:selectPatchset`, { patchset_id: ps }), 'select');
    }
    async passCi(ps) {
        const run = await ok(this.call('POST', `/patchsets/${ps}:runCi`, {}), 'runCi');
        const index = run.job.worker_job_index;
        const claim = await ok(this.call('POST', `/worker-jobs/${index}:claim`, { accepted_runtime_contracts: ['svc.runner.native-job.v3'] }), 'claim');
        await ok(this.call('POST', `/worker-jobs/${index}:complete`, { attempt_count: claim.attempt_count, lease_token: claim.lease_token, detail: { job_kind: 7, result: { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: 'pass', suite_result_count: 0, suite_results: [] } } }), 'complete');
    }
    approve(change, ps, who) {
        return ok(this.call('POST', `/changes/${change}/reviews`, { patchset_id: ps, reviewer: who, action: 'approve' }, who), `approve by ${who}`);
    }
    rules(json, who = 'admin') {
        return this.call('PUT', '/rules', json, who);
    }
    async readiness(change, who) {
        return ok(this.call('GET', `/read/changes/${change}/readiness`, undefined, who), 'readiness');
    }
    submit(change, who, extra = {}) {
        return this.call('POST', `/changes/${change}:submit`, { mode: 'merge', ...extra }, who);
    }
    async events(type) {
        return (await ok(this.call('GET', `/events?limit=1000&types=${type}`))).events;
    }
}
function refused(res, kind) {
    expect(res.status, res.text).to.equal(409);
    expect(res.json.failure_kind).to.equal(kind);
    return res.json.land;
}
describe('repository rules: CODEOWNERS syntax', () => {
    it('last matching pattern wins; dir/* is not nested; dir/ and ** own everything below; anchored and unanchored patterns', () => {
        const co = parseCodeOwners(['# owners', '*            @everyone', '*.ts @bob # trailing comment', 'src/** @team-core', '/src/special.ts @carol', 'docs/* @dora', 'apps/ @apps', '**/logs @ops', 'vendor/', '\\#notes @hash'].join('\n'), 'CODEOWNERS');
        expect(co.problems).to.deep.equal([]);
        const of = (p) => ownersOf(co, p)?.owners ?? null;
        expect(of('README')).to.deep.equal(['everyone']);
        expect(of('x/y.ts')).to.deep.equal(['bob']);
        expect(of('src/a.ts')).to.deep.equal(['team-core']);
        expect(of('src/special.ts')).to.deep.equal(['carol']);
        expect(of('lib/src/special.ts')).to.deep.equal(['bob']);
        expect(of('docs/a.md')).to.deep.equal(['dora']);
        expect(of('docs/deep/a.md')).to.deep.equal(['everyone']);
        expect(of('apps/a/b.js')).to.deep.equal(['apps']);
        expect(of('x/apps/b.js')).to.deep.equal(['apps']);
        expect(of('build/logs/x.txt')).to.deep.equal(['ops']);
        expect(of('vendor/lib.c')).to.deep.equal([]);
        expect(of('#notes')).to.deep.equal(['hash']);
    });
    it('reports bad patterns and owner names with their line numbers (the line is skipped)', () => {
        const co = parseCodeOwners(['*.md @docs', '!secret.md @x', 'a[bc].txt @y', '*.js bob', '*.go @ok someone@example.com', 'a/**b @z'].join('\n'), '.cairn/CODEOWNERS');
        expect(co.problems.map((p) => p.line)).to.deep.equal([2, 3, 4, 5, 6]);
        expect(co.problems[0].message).to.match(/negated/);
        expect(co.problems[2].message).to.match(/must be @name/);
        expect(co.rules.map((r) => r.line)).to.deep.equal([1]);
    });
    it('fsck\'s check of the stored record: the one id, every rule present and valid', () => {
        const good = { rules: { ...DEFAULT_RULES }, updated_at_s: 1, updated_by: null };
        expect(rulesRecordProblems('rules', good)).to.deep.equal([]);
        expect(rulesRecordProblems('other', good)[0]).to.match(/the one rules record is "rules"/);
        expect(rulesRecordProblems('rules', { ...good, rules: { ...DEFAULT_RULES, required_approvals: 99 } })[0]).to.match(/from 0 to 10/);
        const { require_ci: _drop, ...partial } = DEFAULT_RULES;
        expect(rulesRecordProblems('rules', { ...good, rules: partial })).to.deep.equal(['lacks require_ci']);
        expect(rulesRecordProblems('rules', { ...good, updated_by: 7 })).to.deep.equal(['updated_by is neither null nor a name']);
    });
    it('an approval by the author or the uploader (pushed_by) never counts', () => {
        const pushed = { author: 'Alice Example', pushed_by: 'alice' };
        expect(approvalsRequirement(1, ['alice'], pushed)).to.include({ satisfied: false });
        expect(approvalsRequirement(1, ['alice'], pushed).message).to.match(/^needs 1 approval from someone other than Alice Example and alice/);
        expect(approvalsRequirement(1, ['Alice Example', 'bob'], pushed)).to.include({ satisfied: true });
        expect(approvalsRequirement(2, ['bob'], { author: 'alice', pushed_by: null }).message).to.match(/^needs 1 more approval from someone other than alice/);
    });
});
describe('repository rules over HTTP', function () {
    this.timeout(180_000);
    let s;
    before(async () => {
        // Names from the header without an auth mode (no front door): these tests are about rules, not roles (test/access-matrix.test.ts).
        s = await startTestServer(undefined, { identity: { header: H }, gitRefresh: false, queue: { depth: 4, retries: 0, batch: 1, stall_s: 3600 } });
        (await s.ready).groupMembers = (g) => GROUPS[g] ?? null;
    });
    after(() => s?.stop());
    async function fresh(name, files = { 'a.txt': 'a\n', 'b.txt': 'b\n' }) {
        const r = new Repo(s, await register(s.url, name));
        return { r, base: await r.snap(files, true) };
    }
    it('a repository without rules reads the defaults and lands as before: no approval needed', async () => {
        const { r, base } = await fresh('rules-defaults');
        const got = await ok(r.call('GET', '/rules'));
        expect(got).to.deep.equal({ repository_index: r.repo, rules: { required_approvals: 0, require_code_owners: false, dismiss_stale_approvals: true, require_ci: true, require_resolved_threads: false, land_allowed: [], bypass_allowed: [] }, updated_at_s: null, updated_by: null });
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n' });
        const before = await r.readiness(c.change);
        expect(before).to.include({ can_land: false, blocked_by: 'blocked_by_policy', reason: 'the policy decision at the land is fail, not pass (failing checks: tests)' });
        expect(before.requirements.map((x) => [x.kind, x.satisfied])).to.deep.equal([['blocked_by_policy', false], ['blocked_by_review', true], ['blocked_by_ci', false]]);
        await r.passCi(c.ps);
        const landed = await ok(r.submit(c.change, 'alice'), 'land');
        expect(landed.land).to.include({ status: 'landed', bypassed_by: null });
        expect(landed.land.bypassed).to.deep.equal([]);
    });
    it('required_approvals: the author\'s approval does not count; one from someone else unblocks', async () => {
        const { r, base } = await fresh('rules-approvals');
        const set = await ok(r.rules({ rules: { required_approvals: 1 } }, 'admin'));
        expect(set.rules.required_approvals).to.equal(1);
        expect(set).to.include({ updated_by: 'admin' });
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n' }, 'alice');
        await r.passCi(c.ps);
        await r.approve(c.change, c.ps, 'alice');
        const blocked = await r.readiness(c.change);
        expect(blocked).to.include({ can_land: false, blocked_by: 'approvals_required' });
        expect(blocked.reason).to.match(/^needs 1 approval from someone other than alice/);
        expect(blocked.reason).to.include('the approval of alice does not count');
        refused(await r.submit(c.change, 'alice'), 'approvals_required');
        await r.approve(c.change, c.ps, 'bob');
        const ready = await r.readiness(c.change);
        expect(ready).to.include({ can_land: true, blocked_by: null });
        expect(ready.requirements.find((x) => x.kind === 'approvals_required')).to.include({ satisfied: true, rule: 'required_approvals' });
        expect((await ok(r.submit(c.change, 'alice'), 'land')).land.status).to.equal('landed');
        const changed = await r.events('rules.changed');
        expect(changed.map((e) => e.data)).to.deep.equal([{ by: 'admin', fields: 'required_approvals' }]);
    });
    it('code owners: last match wins, a group owner through the injected membership, owners asked on the new patchset, every owned path needs its owner', async () => {
        const { r, base } = await fresh('rules-owners', {
            CODEOWNERS: '# who owns what\n*.ts @bob\nsrc/** @team-core\nsrc/special.ts @carol\n',
            'src/a.ts': 'a\n', 'src/special.ts': 's\n', 'README': 'r\n',
        });
        await ok(r.rules({ rules: { require_code_owners: true } }));
        const c = await r.change(base, { CODEOWNERS: '# who owns what\n*.ts @bob\nsrc/** @team-core\nsrc/special.ts @carol\n', 'src/a.ts': 'A\n', 'src/special.ts': 'S\n', README: 'R\n' }, 'alice');
        await r.passCi(c.ps);
        // Asked on creation: the group and the person, in the patchset's commit.
        const reviewers = await ok(r.call('GET', `/read/changes/${c.change}/reviewers`));
        expect(reviewers.reviewers.map((x) => [x.name, x.kind])).to.deep.equal([['team-core', 'group'], ['carol', 'person']]);
        const turn = await ok(r.call('GET', `/read/changes/${c.change}/attention`));
        expect(turn.attention.map((x) => x.name)).to.include('carol');
        const first = await r.readiness(c.change);
        expect(first).to.include({ can_land: false, blocked_by: 'code_owners_required' });
        expect(first.reason).to.equal('needs an approval from an owner of src/a.ts: @team-core; src/special.ts: @carol (not alice)');
        expect(first.code_owners).to.deep.include({ path: 'CODEOWNERS', problem_count: 0 });
        expect(first.code_owners.owned_paths).to.deep.equal([{ path: 'src/a.ts', owners: ['team-core'] }, { path: 'src/special.ts', owners: ['carol'] }]);
        // bob owns *.ts, but later lines own src/: his approval is not an owner's.
        await r.approve(c.change, c.ps, 'bob');
        await r.approve(c.change, c.ps, 'erin');
        const half = await r.readiness(c.change);
        expect(half.reason).to.equal('needs an approval from an owner of src/special.ts: @carol (not alice)');
        expect(half.requirements.find((x) => x.kind === 'code_owners_required').who).to.deep.equal(['carol']);
        await r.approve(c.change, c.ps, 'carol');
        expect(await r.readiness(c.change)).to.include({ can_land: true, blocked_by: null });
        expect((await ok(r.submit(c.change, 'alice'), 'land')).land.status).to.equal('landed');
    });
    it('code owners of a patchset touching more paths than its record lists (1,000): every path is read and judged', async () => {
        const many = {};
        for (let i = 0; i < 1005; i++)
            many[`many/f${String(i).padStart(4, '0')}.txt`] = `${i}\n`;
        const { r, base } = await fresh('rules-owners-many', { CODEOWNERS: 'zz/ @zed\n', 'zz/owned.txt': 'z\n' });
        await ok(r.rules({ rules: { require_code_owners: true, require_ci: false } }));
        const c = await r.change(base, { CODEOWNERS: 'zz/ @zed\n', 'zz/owned.txt': 'Z\n', ...many }, 'alice', { verification_state: 'pass', require_tests_pass: false });
        const ps = (await ok(r.call('GET', `/patchsets/${c.ps}`))).patchset;
        expect(ps.changed_files_truncated).to.equal(true);
        const got = await r.readiness(c.change);
        expect(got).to.include({ blocked_by: 'code_owners_required', reason: 'needs an approval from an owner of zz/owned.txt: @zed (not alice)' });
        expect(got.code_owners.owned_paths).to.deep.equal([{ path: 'zz/owned.txt', owners: ['zed'] }]);
        await r.approve(c.change, c.ps, 'zed');
        expect((await ok(r.submit(c.change, 'alice'), 'land')).land.status).to.equal('landed');
    });
    it('an invalid CODEOWNERS file is reported with its line numbers and blocks, with the rule on', async () => {
        const { r, base } = await fresh('rules-owners-invalid', { 'docs/CODEOWNERS': '*.txt @docs\n!secret.txt @x\n*.md docs\n', 'a.txt': 'a\n' });
        await ok(r.rules({ rules: { require_code_owners: true } }));
        const c = await r.change(base, { 'docs/CODEOWNERS': '*.txt @docs\n!secret.txt @x\n*.md docs\n', 'a.txt': 'A\n' });
        await r.passCi(c.ps);
        await r.approve(c.change, c.ps, 'docs');
        const got = await r.readiness(c.change);
        expect(got).to.include({ can_land: false, blocked_by: 'code_owners_required' });
        expect(got.code_owners.path).to.equal('docs/CODEOWNERS');
        expect(got.code_owners.problems.map((p) => p.line)).to.deep.equal([2, 3]);
        expect(got.reason).to.match(/^docs\/CODEOWNERS has 2 problem\(s\) \(line 2: .*negated.*; line 3: .*must be @name/);
        refused(await r.submit(c.change, 'alice'), 'code_owners_required');
    });
    it('dismiss_stale_approvals: a new patchset with other changes dismisses the approval; a trivial rebase carries it; off, approvals carry', async () => {
        const { r, base } = await fresh('rules-stale', { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
        await ok(r.rules({ rules: { required_approvals: 1, require_ci: false } }));
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }, 'alice', { verification_state: 'pass', require_tests_pass: false });
        await r.approve(c.change, c.ps, 'bob');
        expect(await r.readiness(c.change)).to.include({ can_land: true });
        // ps-2 changes other content: bob's approval is dismissed.
        const rev2 = await r.snap({ 'a.txt': 'A2\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }, false, base);
        const ps2 = await r.patchset(c.change, base, rev2, 'alice', { verification_state: 'pass', require_tests_pass: false });
        await r.select(c.change, ps2);
        const stale = await r.readiness(c.change);
        expect(stale).to.include({ can_land: false, blocked_by: 'approvals_required' });
        expect(stale.approvals).to.deep.equal([{ reviewer: 'bob', review_id: `${c.change}.review-1`, patchset_id: c.ps, state: 'dismissed', reason: `approved ${c.ps}; ${ps2} changes other content, so the approval was dismissed (dismiss_stale_approvals)` }]);
        const list = await ok(r.call('GET', `/changes/${c.change}/reviews`));
        expect(list.reviews.find((x) => x.reviewer === 'bob').approval.state).to.equal('dismissed');
        // bob approves ps-2; ps-3 rebases ps-2's change onto another base (b.txt changed there): carried.
        await r.approve(c.change, ps2, 'bob');
        const moved = await r.snap({ 'a.txt': 'a\n', 'b.txt': 'B\n', 'c.txt': 'c\n' }, false, base);
        const rev3 = await r.snap({ 'a.txt': 'A2\n', 'b.txt': 'B\n', 'c.txt': 'c\n' }, false, moved);
        const ps3 = await r.patchset(c.change, moved, rev3, 'alice', { verification_state: 'pass', require_tests_pass: false });
        await r.select(c.change, ps3);
        const rebased = await r.readiness(c.change);
        expect(rebased).to.include({ can_land: true });
        expect(rebased.approvals).to.deep.equal([{ reviewer: 'bob', review_id: `${c.change}.review-2`, patchset_id: ps2, state: 'carried', reason: `approved ${ps2}, whose changes ${ps3} repeats exactly (same paths, same content: a trivial rebase)` }]);
        // ps-4 changes c.txt too: dismissed again, until the rule is off.
        const rev4 = await r.snap({ 'a.txt': 'A2\n', 'b.txt': 'B\n', 'c.txt': 'C\n' }, false, moved);
        const ps4 = await r.patchset(c.change, moved, rev4, 'alice', { verification_state: 'pass', require_tests_pass: false });
        await r.select(c.change, ps4);
        expect(await r.readiness(c.change)).to.include({ blocked_by: 'approvals_required' });
        await ok(r.rules({ rules: { dismiss_stale_approvals: false } }));
        const kept = await r.readiness(c.change);
        expect(kept).to.include({ can_land: true });
        expect(kept.approvals[0]).to.include({ state: 'carried', patchset_id: ps2 });
    });
    it('require_ci off: a change lands without CI (its attestation asks for no tests)', async () => {
        const { r, base } = await fresh('rules-no-ci');
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n' }, 'alice', { verification_state: 'pass', require_tests_pass: false });
        refused(await r.submit(c.change, 'alice'), 'blocked_by_ci');
        await ok(r.rules({ rules: { require_ci: false } }));
        const ready = await r.readiness(c.change);
        expect(ready).to.include({ can_land: true });
        expect(ready.requirements.map((x) => x.kind)).to.not.include('blocked_by_ci');
        expect((await ok(r.submit(c.change, 'alice'), 'land')).land.status).to.equal('landed');
    });
    it('require_resolved_threads: an unresolved thread blocks (the rule or policy_flags bit 1), resolving it lifts it', async () => {
        const { r, base } = await fresh('rules-threads');
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n' }, 'alice', { verification_state: 'pass', require_tests_pass: false });
        await ok(r.rules({ rules: { require_ci: false } }));
        const thread = (await ok(r.call('POST', `/changes/${c.change}/comments`, { patchset_id: c.ps, author: 'bob', body: 'why?', anchor: { path: 'a.txt', line: 1 } }), 'comment')).thread_id;
        expect(await r.readiness(c.change)).to.include({ can_land: true });
        await ok(r.rules({ rules: { require_resolved_threads: true } }));
        const blocked = await r.readiness(c.change);
        expect(blocked).to.include({ can_land: false, blocked_by: 'unresolved_threads', reason: '1 unresolved comment thread(s); this repository requires every thread resolved before a land' });
        refused(await r.submit(c.change, 'alice'), 'unresolved_threads');
        await ok(r.call('POST', `/changes/${c.change}/threads/${thread}:resolve`, { author: 'bob' }), 'resolve');
        expect((await ok(r.submit(c.change, 'alice'), 'land')).land.status).to.equal('landed');
    });
    it('land_allowed and bypass: who may land, a bypass refused (403, nothing recorded) and one allowed through a group, recorded with who and what it overrode', async () => {
        const { r, base } = await fresh('rules-bypass');
        await ok(r.rules({ rules: { required_approvals: 1, land_allowed: ['maint', 'admins'], bypass_allowed: ['admins'] } }));
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n' }, 'alice');
        await r.passCi(c.ps);
        const forCarol = await r.readiness(c.change, 'carol');
        expect(forCarol).to.include({ blocked_by: 'land_not_allowed', reason: 'carol may not land in this repository; who may: maint, admins' });
        expect((await r.readiness(c.change, 'maint')).blocked_by).to.equal('approvals_required');
        refused(await r.submit(c.change, 'carol'), 'land_not_allowed');
        const landsBefore = (await ok(r.call('GET', `/read/changes/${c.change}/lands`))).lands.length;
        const no = await r.submit(c.change, 'maint', { bypass: true });
        expect(no.status, no.text).to.equal(403);
        expect(no.json.error).to.equal('maint may not bypass the rules of this repository (only the accounts and groups of its bypass_allowed rule may)');
        expect((await ok(r.call('GET', `/read/changes/${c.change}/lands`))).lands.length).to.equal(landsBefore);
        const typed = await r.submit(c.change, 'root', { bypass: 'yes' });
        expect(typed.status, typed.text).to.equal(422);
        const yes = await ok(r.submit(c.change, 'root', { bypass: true }), 'bypass');
        expect(yes.land).to.include({ status: 'landed', landed_by: 'root', bypassed_by: 'root' });
        expect(yes.land.bypassed.map((b) => b.kind)).to.deep.equal(['approvals_required']);
        const events = await r.events('land.bypassed');
        expect(events.map((e) => e.data)).to.deep.equal([{ land_id: yes.land.land_id, change_id: c.change, change_ref: c.ref, patchset_id: c.ps, target_line: 'main', by: 'root', kinds: 'approvals_required' }]);
    });
    it('the land queue: a change the rules block cannot join; a bypass needs bypass_allowed (403)', async () => {
        const { r, base } = await fresh('rules-queue');
        await ok(r.rules({ rules: { required_approvals: 1, bypass_allowed: ['root'] } }));
        const c = await r.change(base, { 'a.txt': 'A\n', 'b.txt': 'b\n' }, 'alice');
        const blocked = await r.call('POST', '/land-queue', { change_ref: c.ref, mode: 'merge' }, 'alice');
        expect(blocked.status, blocked.text).to.equal(409);
        expect(blocked.json.error).to.match(/approvals_required: needs 1 approval from someone other than alice/);
        const no = await r.call('POST', '/land-queue', { change_ref: c.ref, mode: 'merge', bypass: true }, 'alice');
        expect(no.status, no.text).to.equal(403);
        const yes = await r.call('POST', '/land-queue', { change_ref: c.ref, mode: 'merge', bypass: true }, 'root');
        expect(yes.status, yes.text).to.equal(201);
        expect(yes.json.entry).to.include({ bypass: true, enqueued_by: 'root' });
    });
    it('PUT rules: unknown fields and wrong types 422, values out of range 400, and nothing changes; a partial PUT keeps the rest', async () => {
        const { r } = await fresh('rules-validation');
        await ok(r.rules({ rules: { required_approvals: 2, land_allowed: ['maint'] } }, 'admin'));
        const before = await ok(r.call('GET', '/rules'));
        const cases = [
            [{ rules: { required_approvals: 11 } }, 400, /required_approvals must be an integer from 0 to 10/],
            [{ rules: { required_approvals: -1 } }, 400, /from 0 to 10/],
            [{ rules: { required_approvals: 1.5 } }, 400, /integer/],
            [{ rules: { required_approvals: '1' } }, 422, /required_approvals/],
            [{ rules: { require_ci: 'yes' } }, 422, /require_ci/],
            [{ rules: { nope: true } }, 422, /unknown field: rules.nope/],
            [{ rules: { required_approvals: 1 }, extra: 1 }, 422, /unknown field: extra/],
            [{}, 422, /missing required field: rules/],
            [{ rules: { land_allowed: ['ok', ''] } }, 400, /land_allowed\[1\] must be non-empty/],
            [{ rules: { bypass_allowed: ['a', 'a'] } }, 400, /names "a" twice/],
            [{ rules: { land_allowed: 'maint' } }, 422, /land_allowed/],
        ];
        for (const [body, status, message] of cases) {
            const res = await r.rules(body, 'mallory');
            expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.equal(status);
            expect(res.json.error).to.match(message);
        }
        expect(await ok(r.call('GET', '/rules'))).to.deep.equal(before);
        const after = await ok(r.rules({ rules: { require_resolved_threads: true } }, 'root'));
        expect(after.rules).to.include({ required_approvals: 2, require_resolved_threads: true });
        expect(after.rules.land_allowed).to.deep.equal(['maint']);
        expect(after.updated_by).to.equal('root');
        expect((await r.events('rules.changed')).map((e) => e.data.fields)).to.deep.equal(['required_approvals,land_allowed', 'require_resolved_threads']);
    });
    it('a server with default rules gives them to each new repository (the team defaults: one approval from a non-author, CI required)', async () => {
        const service = await s.ready;
        service.defaultRules = TEAM_DEFAULT_RULES;
        try {
            const repo = await register(s.url, 'rules-team-defaults');
            const got = await ok(api(s.url, 'GET', R(repo, '/rules')));
            expect(got.rules).to.include({ required_approvals: 1, require_ci: true, require_code_owners: false });
            expect(got.updated_at_s).to.be.a('number');
        }
        finally {
            service.defaultRules = null;
        }
        const plain = await register(s.url, 'rules-no-defaults');
        expect((await ok(api(s.url, 'GET', R(plain, '/rules')))).updated_at_s).to.equal(null);
    });
    it('CairnService option defaultRules: a repository it registers starts with them; groupMembers is the membership the rules ask', async () => {
        const service = await CairnService.open({ dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'silent' }), defaultRules: TEAM_DEFAULT_RULES, groupMembers: (g) => (g === 'core' ? ['erin'] : null) });
        try {
            const { record } = await service.register('team', '', 0);
            const a = service.authority(record.repository_index);
            expect(a.rules.view().rules).to.deep.equal({ ...DEFAULT_RULES, required_approvals: 1, require_ci: true });
            expect(a.rules.groupMembers('core')).to.deep.equal(['erin']);
        }
        finally {
            service.close();
        }
    });
    it('the rules travel with the repository: export (retirement) and restore carry them as set', async () => {
        // A server that names no callers: a retirement there needs no identified operator.
        const plain = await startTestServer();
        try {
            const repo = await register(plain.url, 'rules-export');
            const set = await ok(api(plain.url, 'PUT', R(repo, '/rules'), { json: { rules: { required_approvals: 2, require_code_owners: true, bypass_allowed: ['root'] } } }));
            const { manifest, files } = await exportRepo(plain.url, repo);
            const restored = await restoreRepo(plain.url, manifest, files);
            const got = await ok(api(plain.url, 'GET', R(restored, '/rules')));
            expect(got).to.deep.equal({ ...set, repository_index: restored });
        }
        finally {
            await plain.stop();
        }
    });
});
//# sourceMappingURL=rules.test.js.map