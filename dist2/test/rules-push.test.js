// Repository rules and a change pushed for review (docs/api.md "Repository rules", docs/git.md
// "Push for review"): the pusher is the patchset's uploader (`pushed_by`), so their approval of
// it does not count toward required_approvals (whoever the commit names as its author); one by
// someone else does. Over real HTTP and git's smart HTTP with the ingress's identity header.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { importGit } from '../lib/client/git-import.js';
import { NO_PROGRESS } from '../lib/client/progress.js';
import { api, ok, register, startTestServer, tempDir } from './helpers.js';
import { commit, git, hasGit } from './git-fixture.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const H = 'X-Remote-User';
function client(args) {
    return new Promise((resolve, reject) => {
        const child = spawn('git', args, { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Linus', GIT_AUTHOR_EMAIL: 'l@example.org', GIT_COMMITTER_NAME: 'Linus', GIT_COMMITTER_EMAIL: 'l@example.org' } });
        let stderr = '';
        child.stderr.on('data', (d) => { stderr += d; });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stderr }));
    });
}
(hasGit ? describe : describe.skip)('repository rules: a change pushed for review', function () {
    this.timeout(120_000);
    let s;
    before(async () => {
        s = await startTestServer(undefined, { identity: { header: H } });
    });
    after(() => s?.stop());
    it('the pusher\'s approval does not count toward required_approvals; another reviewer\'s does', async () => {
        const src = path.join(tempDir('cairn-git-'), 'src');
        await fsp.mkdir(src, { recursive: true });
        git(src, ['init', '-q', '-b', 'main']);
        await fsp.writeFile(path.join(src, 'a.txt'), 'one\n');
        git(src, ['add', '-A']);
        commit(src, 'first\n');
        const r = await register(s.url, 'rules-push');
        await importGit({ server: s.url, repo: r, source: src, line: 'main', progress: NO_PROGRESS });
        await ok(api(s.url, 'PUT', R(r, '/rules'), { json: { rules: { required_approvals: 1, require_ci: false } } }));
        const url = `${s.url}${R(r, '/git/main.git')}`;
        const dir = path.join(tempDir('cairn-push-'), 'work');
        expect((await client(['clone', '-q', url, dir])).code).to.equal(0);
        await fsp.writeFile(path.join(dir, 'a.txt'), 'two\n');
        expect((await client(['-C', dir, 'commit', '-q', '-a', '-m', 'two'])).code).to.equal(0);
        const pushed = await client(['-C', dir, '-c', `http.extraHeader=${H}: ann`, 'push', url, 'HEAD:refs/for/main']);
        expect(pushed.code, pushed.stderr).to.equal(0);
        const ps = (await ok(api(s.url, 'GET', R(r, '/changes/change-1/patchsets')))).patchsets[0];
        expect(ps).to.include({ pushed_by: 'ann' });
        await ok(api(s.url, 'PUT', R(r, `/patchsets/${ps.patchset_id}/attestation`), { json: { verification_state: 'pass', require_tests_pass: false } }));
        const as = (who) => ({ headers: { [H]: who } });
        await ok(api(s.url, 'POST', R(r, '/changes/change-1/reviews'), { ...as('ann'), json: { patchset_id: ps.patchset_id, reviewer: 'ann', action: 'approve' } }));
        const blocked = await ok(api(s.url, 'GET', R(r, '/read/changes/change-1/readiness')));
        expect(blocked).to.include({ can_land: false, blocked_by: 'approvals_required' });
        expect(blocked.reason).to.match(/^needs 1 approval from someone other than (Linus and )?ann \(.*the approval of ann does not count/);
        await ok(api(s.url, 'POST', R(r, '/changes/change-1/reviews'), { ...as('bob'), json: { patchset_id: ps.patchset_id, reviewer: 'bob', action: 'approve' } }));
        expect(await ok(api(s.url, 'GET', R(r, '/read/changes/change-1/readiness')))).to.include({ can_land: true });
    });
});
//# sourceMappingURL=rules-push.test.js.map