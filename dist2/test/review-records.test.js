// Reviews, attestations and policy decisions on disk (lib/authority/workflow/reviews.ts, the
// compact index of lib/domain/workflow/review-index.ts) and the index's section of workflow.ckpt
// (storage-layout.md §17.1), over real HTTP: every review, attestation, policy, patchset and
// inbox answer is the same after a restart from the checkpoint, from a checkpoint older than the
// log, and with the section missing or damaged (rebuilt from the records); the next review,
// attestation and decision continue their sequences and the chain; an open from the checkpoint
// reads no review record; and the memory the book holds is its index, not the records' bodies.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { promises as fsp, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Authority } from '../lib/authority/authority.js';
import { push } from '../lib/client/transfer.js';
import { startServer } from '../lib/cli/serve.js';
import { ContentStore } from '../lib/store/content-store.js';
import { decodeCheckpoint, encodeCheckpoint } from '../lib/store/workflow-checkpoint.js';
import { api, cli, ok, register, tempDir } from './helpers.js';
const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'review-records-child.js');
/** A server whose log lines are kept, so the open's `recovery` notes can be read. */
async function startLogged(dataDir) {
    const lines = [];
    const log = pino({ level: 'info' }, { write: (line) => { lines.push(line); } });
    const running = await startServer({ host: '127.0.0.1', port: 0, dataDir, log });
    await running.ready;
    const notes = () => lines.map((l) => JSON.parse(l)).filter((o) => o.note).map((o) => o.note);
    return { url: running.url, stop: () => running.stop(), notes };
}
async function snapshot(url, repo, files, moveLine, parent) {
    const dir = tempDir();
    for (const [p, v] of Object.entries(files))
        await fsp.writeFile(path.join(dir, p), v);
    return (await push({ server: url, repo, line: 'main', dir, moveLine, progress: false, ...(parent ? { parent } : {}) })).snapshot_id;
}
/** A change of a new task with a first patchset (base → rev). */
async function changeWithPatchset(url, repo, base, rev, title) {
    const t = (await ok(api(url, 'POST', R(repo, '/tasks'), { json: { title, intent: 'I' } }))).task;
    const c = (await ok(api(url, 'POST', R(repo, '/changes'), { json: { task_id: t.task_id, title, base_line: 'main' } }))).change;
    const ps = (await ok(api(url, 'POST', R(repo, `/changes/${c.change_id}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'ai_with_human_review', author: 'alice' } }))).patchset;
    return { change: c.change_id, ps: ps.patchset_id };
}
const review = (url, repo, change, ps, reviewer, action, extra = {}) => ok(api(url, 'POST', R(repo, `/changes/${change}/reviews`), { json: { patchset_id: ps, reviewer, action, comment: `${reviewer} ${action} `.repeat(8), ...extra } }));
const requestReview = (url, repo, change, ps, group, by) => ok(api(url, 'POST', R(repo, `/changes/${change}:requestReview`), { json: { patchset_id: ps, reviewer_groups: [group], note: `please, ${group}`, requested_by: by } }));
const attest = (url, repo, ps, body) => ok(api(url, 'PUT', R(repo, `/patchsets/${ps}/attestation`), { json: body }));
const evaluate = async (url, repo, ps) => (await ok(api(url, 'POST', R(repo, `/patchsets/${ps}:evaluatePolicy`), { json: {} }))).policy;
/**
 * Four changes with reviews, requests of two groups, attestations and decisions: change 1 has
 * two patchsets (the second selected after its review), change 3's latest request moves it from
 * `ui` to `core`, change 2 has a plain review of action `request` (no group) after its group
 * request, change 4 is not in review and is abandoned.
 */
async function story(url) {
    const repo = await register(url, 'rr');
    const base = await snapshot(url, repo, { 'a.txt': 'one\n' }, true);
    const rev1 = await snapshot(url, repo, { 'a.txt': 'one\ntwo\n' }, false, base);
    const rev2 = await snapshot(url, repo, { 'a.txt': 'one\nTWO\n' }, false, base);
    const made = [];
    for (let i = 1; i <= 4; i++)
        made.push(await changeWithPatchset(url, repo, base, rev1, `C${i}`));
    const [c1, c2, c3, c4] = made;
    await requestReview(url, repo, c1.change, c1.ps, 'core', 'alice');
    await review(url, repo, c1.change, c1.ps, 'bob', 'approve');
    await review(url, repo, c1.change, c1.ps, 'carol', 'comment');
    await attest(url, repo, c1.ps, { verification_state: 'pending', require_tests_pass: false });
    await evaluate(url, repo, c1.ps);
    await attest(url, repo, c1.ps, { verification_state: 'pass', require_tests_pass: false, require_human_review: true });
    await evaluate(url, repo, c1.ps);
    const ps2 = (await ok(api(url, 'POST', R(repo, `/changes/${c1.change}/patchsets`), { json: { base_snapshot_id: base, revision_snapshot_id: rev2, summary: 's2', author_mode: 'ai_with_human_review', author: 'alice' } }))).patchset.patchset_id;
    await ok(api(url, 'POST', R(repo, `/changes/${c1.change}:selectPatchset`), { json: { patchset_id: ps2 } }));
    await review(url, repo, c1.change, ps2, 'dave', 'request_changes');
    await attest(url, repo, ps2, { verification_state: 'pass', require_tests_pass: false });
    await evaluate(url, repo, ps2);
    await requestReview(url, repo, c2.change, c2.ps, 'core', 'erin');
    await review(url, repo, c2.change, c2.ps, 'frank', 'request', { blocking: false });
    await review(url, repo, c2.change, c2.ps, 'dave', 'request_changes');
    await review(url, repo, c2.change, c2.ps, 'dave', 'dismiss');
    await evaluate(url, repo, c2.ps);
    await requestReview(url, repo, c3.change, c3.ps, 'ui', 'gina');
    await review(url, repo, c3.change, c3.ps, 'hal', 'approve');
    await requestReview(url, repo, c3.change, c3.ps, 'core', 'gina');
    await review(url, repo, c4.change, c4.ps, 'ivan', 'comment');
    await attest(url, repo, c4.ps, { verification_state: 'fail' });
    await evaluate(url, repo, c4.ps);
    await ok(api(url, 'POST', R(repo, `/changes/${c4.change}:close`), { json: { status: 'abandoned' } }));
    return { repo, changes: made.map((m) => m.change), patchsets: [...made.map((m) => m.ps), ps2] };
}
/** More of everything on the same repository (a log tail after a checkpoint). */
async function more(url, s) {
    const [c1, c2, c3] = s.changes;
    const [, ps2, ps3] = s.patchsets;
    const ps12 = s.patchsets[4];
    await review(url, s.repo, c1, ps12, 'bob', 'approve');
    await review(url, s.repo, c1, ps12, 'dave', 'dismiss');
    await attest(url, s.repo, ps12, { verification_state: 'pass', require_tests_pass: false, require_human_review: true });
    await evaluate(url, s.repo, ps12);
    await requestReview(url, s.repo, c2, ps2, 'docs', 'erin');
    await attest(url, s.repo, ps2, { verification_state: 'pass', require_tests_pass: false });
    await evaluate(url, s.repo, ps2);
    await review(url, s.repo, c3, ps3, 'kim', 'approve');
    const base = (await ok(api(url, 'GET', R(s.repo, `/patchsets/${ps3}`)))).patchset.base_snapshot_id;
    const rev = (await ok(api(url, 'GET', R(s.repo, `/patchsets/${ps3}`)))).patchset.revision_snapshot_id;
    const c5 = await changeWithPatchset(url, s.repo, base, rev, 'C5');
    await requestReview(url, s.repo, c5.change, c5.ps, 'ui', 'lee');
    await attest(url, s.repo, c5.ps, { verification_state: 'pending' });
    await evaluate(url, s.repo, c5.ps);
    s.changes.push(c5.change);
    s.patchsets.push(c5.ps);
}
/** Every answer that reads reviews, attestations, decisions or the inbox (status and body). */
async function answers(url, s) {
    const get = async (p) => {
        const res = await api(url, 'GET', R(s.repo, p));
        return { status: res.status, json: res.json };
    };
    const out = {};
    for (const c of s.changes) {
        out[c] = {
            reviews: await get(`/changes/${c}/reviews`),
            reviews2: await get(`/changes/${c}/reviews?limit=2`),
            change: await get(`/changes/${c}`),
            patchsets: await get(`/changes/${c}/patchsets`),
            readiness: await get(`/read/changes/${c}/readiness`),
        };
        const cursor = out[c].reviews2.json.next_cursor;
        if (cursor)
            out[c].reviews2next = await get(`/changes/${c}/reviews?limit=2&cursor=${cursor}`);
    }
    for (const ps of s.patchsets) {
        out[ps] = { patchset: await get(`/patchsets/${ps}`), attestation: await get(`/patchsets/${ps}/attestation`), policy: await get(`/patchsets/${ps}/policy`) };
    }
    out.inbox = await get('/read/reviewer-inbox');
    out.core = await get('/read/reviewer-inbox?reviewer_group=core');
    out.none = await get('/read/reviewer-inbox?reviewer_group=nobody');
    const pages = [];
    let cursor = null;
    do {
        const page = await get(`/read/reviewer-inbox?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        pages.push(page);
        cursor = page.json.next_cursor;
    } while (cursor);
    out.pages = pages;
    return out;
}
const ckptFile = (data, repo) => path.join(data, 'repositories', String(repo), 'workflow.ckpt');
async function fsckClean(data) {
    const check = await cli(['fsck', '--data', data]);
    expect(check.code, check.stdout + check.stderr).to.equal(0);
}
describe('review records: bodies on disk, the review index in workflow.ckpt', function () {
    this.timeout(60_000);
    it('a restart from the checkpoint answers the same; the next review, attestation and decision continue the sequences and the chain', async () => {
        const data = path.join(tempDir(), 'data');
        let s = await startLogged(data);
        const st = await story(s.url);
        const before = await answers(s.url, st);
        const head = before[st.patchsets[3]].policy.json.policy; // the last decision written (change 4's)
        expect(head.chain_seq).to.equal(5);
        await s.stop();
        const ck = decodeCheckpoint(readFileSync(ckptFile(data, st.repo)));
        expect([...ck.sections.keys()]).to.deep.equal(['records', 'workflow-indexes', 'workflow-people', 'review-indexes', 'land-indexes', 'land-queue']);
        await fsckClean(data); // fsck rebuilds the section from the records, byte for byte
        s = await startLogged(data);
        expect(await answers(s.url, st)).to.deep.equal(before);
        expect(s.notes()).to.deep.equal([]);
        const [c1, c2] = st.changes;
        const next = await evaluate(s.url, st.repo, st.patchsets[1]);
        expect(next).to.include({ chain_seq: 6, prev_sha256: head.sha256, decision_id: `${st.patchsets[1]}.decision-2` });
        expect((await review(s.url, st.repo, c1, st.patchsets[4], 'zed', 'comment')).review.review_id).to.equal(`${c1}.review-5`);
        expect((await review(s.url, st.repo, c2, st.patchsets[1], 'zed', 'comment')).review.review_id).to.equal(`${c2}.review-5`);
        expect((await attest(s.url, st.repo, st.patchsets[0], { verification_state: 'pass' })).attestation.attestation_id).to.equal(`${st.patchsets[0]}.attestation-3`);
        const after = await answers(s.url, st);
        await s.stop();
        await fsckClean(data);
        s = await startLogged(data);
        expect(await answers(s.url, st)).to.deep.equal(after);
        await s.stop();
    });
    it('a checkpoint older than the log: the reviews, attestations and decisions of the tail are applied on top of it', async () => {
        const data = path.join(tempDir(), 'data');
        let s = await startLogged(data);
        const st = await story(s.url);
        await s.stop();
        const old = readFileSync(ckptFile(data, st.repo));
        s = await startLogged(data);
        await more(s.url, st);
        const before = await answers(s.url, st);
        await s.stop();
        writeFileSync(ckptFile(data, st.repo), old);
        s = await startLogged(data);
        expect(await answers(s.url, st)).to.deep.equal(before);
        expect(s.notes()).to.deep.equal([]);
        await s.stop();
        await fsckClean(data);
    });
    it('without the checkpoint, without its review section, or with that section damaged, the index is rebuilt from the records and answers the same', async () => {
        const data = path.join(tempDir(), 'data');
        let s = await startLogged(data);
        const st = await story(s.url);
        await more(s.url, st);
        const before = await answers(s.url, st);
        await s.stop();
        const file = ckptFile(data, st.repo);
        const good = readFileSync(file);
        const ck = decodeCheckpoint(good);
        const withSection = (section) => {
            const sections = new Map(ck.sections);
            if (section)
                sections.set('review-indexes', section);
            else
                sections.delete('review-indexes');
            return encodeCheckpoint({ cover: ck.cover, sections });
        };
        const section = ck.sections.get('review-indexes');
        // The first review row (change sequence, review count) with one review fewer: decodes, does not fit.
        const fewer = Buffer.from(section);
        fewer.writeInt32LE(fewer.readInt32LE(8) - 1, 8);
        // A patchset row naming an attestation count of zero and a decision count of zero: does not decode.
        const empty = Buffer.from(section);
        const patchsetsAt = (() => {
            let at = 0;
            for (let i = 0; i < 4; i++)
                at += 4 + empty.readUInt32LE(at);
            return at + 4;
        })();
        empty.writeInt32LE(0, patchsetsAt + 8);
        empty.writeInt32LE(0, patchsetsAt + 12);
        const cases = [
            ['no checkpoint', null, /workflow\.ckpt is missing/],
            ['no review section (a checkpoint written before the section existed)', withSection(null), null],
            ['a section cut short', withSection(section.subarray(0, section.length - 7)), /review indexes do not fit workflow\.log \(section review-indexes: ends early\)/],
            ['a review count one short', withSection(fewer), /review indexes do not fit workflow\.log \(review indexes name \d+ reviews/],
            ['an empty patchset row', withSection(empty), /review indexes do not fit workflow\.log \(section review-indexes: patchset row 0/],
        ];
        for (const [what, bytes, note] of cases) {
            if (bytes)
                writeFileSync(file, bytes);
            else
                await fsp.rm(file);
            s = await startLogged(data);
            expect(await answers(s.url, st), what).to.deep.equal(before);
            if (note)
                expect(s.notes().join('\n'), what).to.match(note);
            else
                expect(s.notes(), what).to.deep.equal([]);
            await s.stop();
            // The open wrote a whole checkpoint again, with the section: the next open reads it without a note.
            expect([...decodeCheckpoint(readFileSync(file)).sections.keys()], what).to.include('review-indexes');
            s = await startLogged(data);
            expect(await answers(s.url, st), what).to.deep.equal(before);
            expect(s.notes(), what).to.deep.equal([]);
            await s.stop();
        }
        await fsckClean(data);
    });
    it('an open from the checkpoint reads no review: one damaged on disk is reported only by the reads that need it', async () => {
        const data = path.join(tempDir(), 'data');
        let s = await startLogged(data);
        const st = await story(s.url);
        const before = await answers(s.url, st);
        await s.stop();
        // Change 4's review (not in the inbox): one byte of its comment changed, its CRC left as it was.
        const log = path.join(data, 'repositories', String(st.repo), 'workflow.log');
        const bytes = readFileSync(log);
        const at = bytes.indexOf(Buffer.from(`"review_id":"${st.changes[3]}.review-1"`));
        const comment = bytes.indexOf(Buffer.from('ivan comment'), at);
        expect(at).to.be.above(0);
        expect(comment).to.be.above(at);
        bytes[comment] = 'I'.charCodeAt(0);
        writeFileSync(log, bytes);
        s = await startLogged(data);
        try {
            const now = await answers(s.url, st);
            expect(now[st.changes[3]].reviews.status).to.equal(500);
            expect(now[st.changes[3]].reviews.json).to.deep.equal({ error: 'internal error: the authority operation failed (see server log)' });
            for (const c of st.changes.slice(0, 3))
                expect(now[c], c).to.deep.equal(before[c]);
            expect(now.inbox).to.deep.equal(before.inbox);
            expect(now[st.patchsets[3]].attestation).to.deep.equal(before[st.patchsets[3]].attestation);
        }
        finally {
            await s.stop();
        }
        // Without the checkpoint the open reads every review, and refuses the damaged one.
        await fsp.rm(ckptFile(data, st.repo));
        s = await startLogged(data);
        try {
            expect((await api(s.url, 'GET', R(st.repo, `/changes/${st.changes[0]}/reviews`))).status).to.equal(500);
        }
        finally {
            await s.stop();
        }
    });
    it('memory: the book holds its index, not the bodies (a few bytes per record whatever the texts)', async function () {
        this.timeout(120_000);
        const root = path.join(tempDir(), 'auth');
        await Authority.create(root, 0, 1_700_000_000);
        const changes = 600;
        const perChange = 10;
        const long = 'x'.repeat(4000);
        const { store } = await ContentStore.open(root);
        try {
            let chain = 0;
            for (let c = 1; c <= changes; c++) {
                await store.transact((tx) => {
                    const ps = `change-${c}.ps-1`;
                    for (let n = 1; n <= perChange; n++) {
                        tx.upsert('review', `change-${c}.review-${n}`, { review_id: `change-${c}.review-${n}`, change_id: `change-${c}`, sequence: n, patchset_id: ps, patchset_fingerprint: null, reviewer: `r${n}`, action: n === 1 ? 'request' : 'comment', comment: long, blocking: false, reviewer_group: n === 1 ? `group-${c % 7}` : null, requested_by: null, created_at_s: c });
                    }
                    tx.upsert('attestation', `${ps}.attestation-1`, { attestation_id: `${ps}.attestation-1`, patchset_id: ps, sequence: 1, author_mode: 'human_only', verification_state: 'pass', revoked: false, require_tests_pass: false, require_human_review: false, require_lint_pass: false, detail: { text: long }, created_at_s: c });
                    chain++;
                    tx.upsert('policy_decision', `${ps}.decision-1`, { decision_id: `${ps}.decision-1`, patchset_id: ps, sequence: 1, chain_seq: chain, decision: 'fail', checks: [{ name: 'x', status: 'fail', explanation: long }], attestation_id: null, ci_run_sequence: 0, ci_worker_job_index: null, evaluated_at_s: c, trigger: 'evaluate', prev_sha256: '', sha256: 'a'.repeat(64) });
                });
            }
        }
        finally {
            store.close();
        }
        const records = changes * (perChange + 2);
        const child = await new Promise((resolve) => {
            const proc = spawn(process.execPath, ['--expose-gc', CHILD, root], { stdio: ['ignore', 'pipe', 'pipe'] });
            let out = '';
            proc.stdout.on('data', (d) => { out += d; });
            proc.stderr.on('data', (d) => { out += d; });
            proc.on('close', (code) => resolve({ code, out }));
        });
        expect(child.code, child.out).to.equal(0);
        const m = JSON.parse(child.out.trim().split('\n').at(-1));
        expect(m.reviews, child.out).to.equal(changes * perChange);
        expect(m.attestations).to.equal(changes);
        expect(m.decisions).to.equal(changes);
        expect(m.inbox_groups).to.equal(7);
        // The bodies are over 4,000 bytes each: an open that kept them would hold more than that per record.
        expect(m.bytes_per_record, child.out).to.be.below(600);
        expect(m.index_bytes / records, child.out).to.be.below(16);
    });
});
//# sourceMappingURL=review-records.test.js.map