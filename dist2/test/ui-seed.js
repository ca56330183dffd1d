// Real data for the browser tests of the reviewer UI (test/ui.test.ts): snapshots pushed with
// the client's push, tasks, changes, patchsets, reviews, attestations, CI (claimed and completed
// as a runner would) and plans, all over HTTP against a running server.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { push } from '../lib/client/transfer.js';
import { api, tempDir } from './helpers.js';
import { withToken } from './access-seed.js';
const RUNTIME = 'svc.runner.native-job.v3';
export const R = (repo, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
async function must(res, what) {
    const r = await res;
    if (r.status !== 200 && r.status !== 201)
        throw new Error(`${what}: HTTP ${r.status} ${r.text}`);
    return r.json;
}
export class Seeder {
    url;
    repo;
    token;
    dir = path.join(tempDir('cairn-ui-seed-'), 'tree');
    /** `token`: sent with every request (a server with an auth mode; test/access-seed.ts). */
    constructor(url, repo, token = null) {
        this.url = url;
        this.repo = repo;
        this.token = token;
    }
    get headers() {
        return this.token ? { authorization: `Bearer ${this.token}` } : {};
    }
    static async register(url, name, token = null) {
        const r = await must(api(url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: name, namespace: '', policy_flags: 0 }, headers: token ? { authorization: `Bearer ${token}` } : {} }), 'register');
        return new Seeder(url, r.repository.repository_index, token);
    }
    post(rest, json) {
        return must(api(this.url, 'POST', R(this.repo, rest), { json, headers: this.headers }), `POST ${rest}`);
    }
    put(rest, json) {
        return must(api(this.url, 'PUT', R(this.repo, rest), { json, headers: this.headers }), `PUT ${rest}`);
    }
    get(rest) {
        return must(api(this.url, 'GET', R(this.repo, rest), { headers: this.headers }), `GET ${rest}`);
    }
    /** Push a tree as a snapshot; `moveLine` moves `line` to it, `parent` names its parent. */
    async snap(files, opts = {}) {
        await fsp.rm(this.dir, { recursive: true, force: true });
        await fsp.mkdir(this.dir, { recursive: true });
        for (const [p, v] of Object.entries(files)) {
            const full = path.join(this.dir, p);
            await fsp.mkdir(path.dirname(full), { recursive: true });
            await fsp.writeFile(full, v);
        }
        const res = await push({ server: this.token ? withToken(this.url, this.token) : this.url, repo: this.repo, line: opts.line ?? 'main', dir: this.dir, moveLine: opts.moveLine ?? false, progress: false, ...(opts.parent ? { parent: opts.parent } : {}), ...(opts.message ? { message: opts.message } : {}) });
        return res.snapshot_id;
    }
    async change(title, opts = {}) {
        const t = (await this.post('/tasks', { title: opts.task ?? title, intent: opts.intent ?? `Deliver: ${title}` })).task;
        const c = (await this.post('/changes', { task_id: t.task_id, title, base_line: opts.line ?? 'main' })).change;
        return { task: t.task_id, change: c.change_id, ref: c.change_ref };
    }
    async patchset(change, base, revision, summary, author = 'carol', mode = 'human_with_ai_assist') {
        return (await this.post(`/changes/${change}/patchsets`, { base_snapshot_id: base, revision_snapshot_id: revision, summary, author_mode: mode, author })).patchset.patchset_id;
    }
    review(change, ps, reviewer, action, comment = '', blocking = false) {
        return this.post(`/changes/${change}/reviews`, { patchset_id: ps, reviewer, action, comment, blocking });
    }
    /** A comment (docs/api.md "Comment threads"): a thread with `anchor`, or a reply with `in_reply_to`; `draft` keeps it the author's. */
    comment(change, body) {
        return this.post(`/changes/${change}/comments`, body);
    }
    requestReview(change, ps, group, note, by) {
        return this.post(`/changes/${change}:requestReview`, { patchset_id: ps, reviewer_groups: [group], note, requested_by: by });
    }
    /** Queue CI for the patchset and, unless `leaveQueued`, claim and complete it as a runner would. */
    async ci(ps, tests = 'pass', leaveQueued = false) {
        const run = await this.post(`/patchsets/${ps}:runCi`, { trigger: 'manual_rerun' });
        if (leaveQueued)
            return run;
        const claim = await this.post(`/worker-jobs/${run.job.worker_job_index}:claim`, { accepted_runtime_contracts: [RUNTIME] });
        const suites = [
            { suite_id: 'unit', status: tests, blocking: true },
            { suite_id: 'integration', status: 'pass', blocking: true },
            { suite_id: 'lint', status: 'pass', blocking: false },
        ];
        return this.post(`/worker-jobs/${claim.worker_job_index}:complete`, {
            attempt_count: claim.attempt_count,
            lease_token: claim.lease_token,
            detail: { job_kind: 7, result: { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: tests, suite_result_count: suites.length, suite_results: suites } },
        });
    }
    attest(ps, verification = 'pass') {
        return this.put(`/patchsets/${ps}/attestation`, { verification_state: verification });
    }
    evaluate(ps) {
        return this.post(`/patchsets/${ps}:evaluatePolicy`, {});
    }
    /** Wait until the land queue has moved the entry to where `done` says (the server moves it after each commit). */
    async queueEntry(id, done) {
        for (let i = 0;; i++) {
            const e = (await this.get(`/land-queue/${id}`)).entry;
            if (done(e))
                return e;
            if (i >= 400)
                throw new Error(`land-queue entry ${id} did not move: ${JSON.stringify(e)}`);
            await new Promise((r) => setTimeout(r, 25));
        }
    }
    /** Claim a land-queue CI job (kind 11) as a runner would; complete it unless `leaveRunning`. */
    async queueJob(index, tests, leaveRunning = false) {
        const claim = await this.post(`/worker-jobs/${index}:claim`, { accepted_runtime_contracts: [RUNTIME] });
        if (leaveRunning)
            return claim;
        const suites = [{ suite_id: 'unit', status: tests, blocking: true }, { suite_id: 'lint', status: 'pass', blocking: false }];
        return this.post(`/worker-jobs/${index}:complete`, {
            attempt_count: claim.attempt_count,
            lease_token: claim.lease_token,
            detail: { job_kind: 11, result: { contract: 'svc.runner.native-result.v1', status: 'succeeded', tests_status: tests, suite_result_count: suites.length, suite_results: suites } },
        });
    }
    /** A change from `base` to `files` whose gates pass but for CI (an attestation that passes, an approval): it may join the land queue. */
    async queueable(title, base, files, summary) {
        const c = await this.change(title);
        const rev = await this.snap(files, { parent: base, message: summary });
        const ps = await this.patchset(c.change, base, rev, summary);
        await this.attest(ps);
        await this.review(c.change, ps, 'erin', 'approve', 'Fine by me.');
        return { change: c.change, ref: c.ref, ps };
    }
}
const lines = (...xs) => xs.join('\n') + '\n';
export const BASE_TREE = {
    'README.md': lines('# webshop', '', 'A small shop: catalogue, cart and checkout.'),
    'src/checkout/handler.ts': lines("import { Cart } from '../cart/cart.js';", "import { charge } from './payments.js';", '', 'export interface CheckoutRequest {', '  cartId: string;', '  customerId: string;', '}', '', '/** Charge the cart and return the order number. */', 'export async function checkout(req: CheckoutRequest, carts: Map<string, Cart>): Promise<string> {', '  const cart = carts.get(req.cartId);', "  if (!cart) throw new Error('no such cart');", '  const total = cart.items.reduce((sum, item) => sum + item.price * item.quantity, 0);', '  const receipt = await charge(req.customerId, total);', '  return receipt.orderNumber;', '}'),
    'src/checkout/payments.ts': lines('export interface Receipt { orderNumber: string; amount: number }', '', 'export async function charge(customerId: string, amount: number): Promise<Receipt> {', '  return { orderNumber: `${customerId}-${Date.now()}`, amount };', '}'),
    'src/cart/cart.ts': lines('export interface Item { sku: string; price: number; quantity: number }', 'export interface Cart { id: string; items: Item[] }'),
    'scripts/report.py': lines('import json', 'import sys', '', 'def main(path):', '    with open(path) as f:', '        orders = json.load(f)', '    print(len(orders), "orders")', '', 'if __name__ == "__main__":', '    main(sys.argv[1])'),
    'docs/checkout.md': lines('# Checkout', '', 'The checkout charges the whole cart at once.'),
};
/** The tree after the seeded documentation change landed. */
export const LANDED_TREE = { ...BASE_TREE, 'docs/checkout.md': BASE_TREE['docs/checkout.md'] + '\nOrders are numbered per customer.\n' };
export const REVISION_1 = {
    ...LANDED_TREE,
    'src/checkout/handler.ts': BASE_TREE['src/checkout/handler.ts']
        .replace("import { charge } from './payments.js';\n", "import { charge } from './payments.js';\nimport { RateLimiter } from './rate-limit.js';\n")
        .replace('/** Charge the cart and return the order number. */\n', 'const limiter = new RateLimiter(5, 60_000);\n\n/** Charge the cart and return the order number. */\n')
        .replace("  const cart = carts.get(req.cartId);\n", "  if (!limiter.allow(req.customerId)) throw new Error('too many checkouts, try again in a minute');\n  const cart = carts.get(req.cartId);\n"),
    'src/checkout/rate-limit.ts': lines('/** A fixed-window limiter: at most `limit` calls per key in each window. */', 'export class RateLimiter {', '  private windows = new Map<string, { start: number; count: number }>();', '', '  constructor(private readonly limit: number, private readonly windowMs: number) {}', '', '  allow(key: string, now = Date.now()): boolean {', '    const w = this.windows.get(key);', '    if (!w || now - w.start >= this.windowMs) {', '      this.windows.set(key, { start: now, count: 1 });', '      return true;', '    }', '    w.count += 1;', '    return w.count <= this.limit;', '  }', '}'),
    'docs/checkout.md': LANDED_TREE['docs/checkout.md'] + 'A customer may check out at most five times a minute.\n',
};
export const REVISION_2 = {
    ...REVISION_1,
    'src/checkout/rate-limit.ts': REVISION_1['src/checkout/rate-limit.ts']
        .replace('/** A fixed-window limiter: at most `limit` calls per key in each window. */', '/**\n * A fixed-window limiter: at most `limit` calls per key in each window.\n * Windows of keys that stay quiet are dropped by `sweep()`.\n */')
        .replace('    return w.count <= this.limit;\n  }\n', '    return w.count <= this.limit;\n  }\n\n  sweep(now = Date.now()): void {\n    for (const [key, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(key);\n  }\n'),
    'scripts/report.py': BASE_TREE['scripts/report.py'].replace('    print(len(orders), "orders")', '    total = sum(o["amount"] for o in orders)\n    print(len(orders), "orders,", total, "in total")'),
};
export const PLAN_MD = lines('# Checkout hardening', '', 'Keep the checkout **fast** and _fair_ under load. See [the runbook](https://example.com/runbook) and `docs/checkout.md`.', '', '## Work', '', '- [x] Rate-limit checkouts per customer {#rate-limit}', '- [ ] Retry failed charges with backoff {#retry}', '- [ ] Report daily totals {#report}', '', '## Notes', '', '> Limits are per customer, not per cart.', '', '| Limit | Window |', '|---|---:|', '| 5 | 60 s |', '', '```ts', 'new RateLimiter(5, 60_000);', '```');
/** A repository that looks like one in daily use. */
export async function seedDemo(url, name = 'webshop') {
    const s = await Seeder.register(url, name);
    const base = await s.snap(BASE_TREE, { moveLine: true, message: 'Catalogue, cart and checkout' });
    // A plan, with a task linked to its first item.
    await s.post('/sprints', { title: 'Checkout hardening', artifact_path: 'plans/checkout.md', artifact_heading: 'Checkout hardening', artifact_body: PLAN_MD, status: 'active', summary: 'Q3 reliability work' });
    const landedOne = await s.change('Document the checkout flow');
    const docRev = await s.snap(LANDED_TREE, { parent: base, message: 'Document order numbers' });
    const psL = await s.patchset(landedOne.change, base, docRev, 'Document order numbers', 'dave', 'human_only');
    await s.ci(psL);
    await s.attest(psL);
    await s.review(landedOne.change, psL, 'erin', 'approve', 'Clear, thanks.');
    await s.post('/task-land', { contract: 'task-land-atomic/v1', idempotency_key: 'seed-land-1', task_or_change_ref: landedOne.ref, mode: 'merge' });
    const head = (await s.get('/lines/main')).head_snapshot_id;
    const rev1 = await s.snap(REVISION_1, { parent: head, message: 'Rate-limit checkouts' });
    const rev2 = await s.snap(REVISION_2, { parent: head, message: 'Rate-limit checkouts; sweep idle windows; report totals' });
    const m = await s.change('Rate-limit checkouts per customer', { task: 'Protect the checkout from bursts' });
    const ps1 = await s.patchset(m.change, head, rev1, 'Fixed-window limiter in the checkout handler');
    await s.ci(ps1);
    await s.review(m.change, ps1, 'alice', 'comment', 'Windows of customers that never come back stay in the map forever. Can we drop them?');
    const ps2 = await s.patchset(m.change, head, rev2, 'Sweep idle windows; report totals');
    await s.post(`/changes/${m.change}:selectPatchset`, { patchset_id: ps2 });
    await s.requestReview(m.change, ps2, 'backend', 'Second round: sweep added', 'carol');
    await s.ci(ps2);
    await s.attest(ps2);
    await s.review(m.change, ps2, 'bob', 'comment', 'sweep() looks right. Who calls it?');
    const threads = await seedThreads(s, m.change, ps1, ps2);
    await s.evaluate(ps2);
    const other = await s.change('Retry failed charges with backoff');
    const otherRev = await s.snap({ ...BASE_TREE, 'src/checkout/payments.ts': BASE_TREE['src/checkout/payments.ts'].replace('  return {', '  // TODO: retry with backoff\n  return {') }, { parent: base, message: 'Retry charges' });
    const psO = await s.patchset(other.change, base, otherRev, 'Retry skeleton');
    await s.requestReview(other.change, psO, 'payments', 'Early look please', 'dave');
    const failedRun = await s.ci(psO, 'fail');
    const active = await s.change('Report daily totals');
    const activeRev = await s.snap({ ...BASE_TREE, 'scripts/report.py': REVISION_2['scripts/report.py'] }, { parent: base, message: 'Totals' });
    const psA = await s.patchset(active.change, base, activeRev, 'Print totals');
    await s.ci(psA, 'pass', true);
    await s.change('Gift cards at checkout');
    // The land queue. The first entry's CI fails on the merged result, twice (one retry): it is
    // ejected with its evidence. The second is being tested (its job claimed by a runner).
    const legacy = await s.queueable('Drop the legacy cart API', head, { ...LANDED_TREE, 'src/cart/cart.ts': LANDED_TREE['src/cart/cart.ts'].replace('export interface Cart', '/** Carts are read by id only. */\nexport interface Cart') }, 'Remove the v1 cart endpoints');
    const ejected = (await s.post('/land-queue', { change_ref: legacy.ref, mode: 'merge' })).entry.entry_id;
    for (let run = 1; run <= 2; run++) {
        const e = await s.queueEntry(ejected, (x) => (x.speculation?.worker_job_indexes.length ?? 0) >= run);
        await s.queueJob(e.speculation.worker_job_indexes[run - 1], 'fail');
    }
    await s.queueEntry(ejected, (x) => x.state === 'ejected');
    const readme = await s.queueable('Describe the checkout in the README', head, { ...LANDED_TREE, 'README.md': LANDED_TREE['README.md'] + '\nSee docs/checkout.md for the checkout.\n' }, 'README: link the checkout docs');
    const testing = (await s.post('/land-queue', { change_ref: readme.ref, mode: 'merge' })).entry.entry_id;
    const job = (await s.queueEntry(testing, (x) => x.ci?.worker_job_index != null)).ci.worker_job_index;
    await s.queueJob(job, 'pass', true);
    const candidate = await s.queueable('Search the catalogue by name', head, { ...LANDED_TREE, 'src/catalogue/search.ts': lines('export function search(names: string[], q: string): string[] {', '  return names.filter((n) => n.includes(q));', '}') }, 'Name search');
    return {
        s, base: head, main: { change: m.change, ref: m.ref, ps1, ps2, threads }, landed: { change: landedOne.change },
        failing: { change: other.change, ps: psO, job: failedRun.job.worker_job_index },
        queue: { ejected: { change: legacy.change, entry: ejected }, testing: { change: readme.change, entry: testing, job }, candidate: { change: candidate.change, ref: candidate.ref } },
    };
}
/** Comment threads of every kind on the reviewed change (ps-1 and ps-2 of REVISION_1 and REVISION_2). */
export async function seedThreads(s, change, ps1, ps2) {
    const id = (r) => r.thread_id;
    const rl = 'src/checkout/rate-limit.ts';
    const ported = id(await s.comment(change, { patchset_id: ps1, author: 'alice', anchor: { path: rl, line: 5 }, body: 'Should `limit` be checked to be **positive**? `new RateLimiter(0, …)` blocks everyone.' }));
    const outdated = id(await s.comment(change, { patchset_id: ps1, author: 'bob', anchor: { path: rl, line: 1 }, body: 'Say what happens to the windows of customers who never come back.' }));
    await s.comment(change, { patchset_id: ps2, author: 'carol', in_reply_to: outdated, body: 'Done in ps-2: see `sweep()`.', resolution: 'resolved' });
    const replied = id(await s.comment(change, { patchset_id: ps2, author: 'bob', anchor: { path: 'scripts/report.py', line: 7 }, body: 'What if an order has no `amount`?' }));
    const answer = await s.comment(change, { patchset_id: ps2, author: 'carol', in_reply_to: replied, body: 'Every order has one since the v2 export; see [the format](https://example.com/orders).' });
    void answer;
    const base = id(await s.comment(change, { patchset_id: ps2, author: 'erin', anchor: { path: 'scripts/report.py', line: 7, side: 'base' }, body: 'The cron parser reads this line: keep `N orders` at the start.' }));
    const file = id(await s.comment(change, { patchset_id: ps2, author: 'erin', anchor: { path: 'docs/checkout.md' }, body: 'Mention the limit in the README too?' }));
    await s.post(`/changes/${change}/threads/${file}:resolve`, { author: 'carol', body: 'The docs page is enough.' });
    const general = id(await s.comment(change, { patchset_id: ps2, author: 'alice', body: 'Please add a test for `sweep()` before this lands.' }));
    const draft = id(await s.comment(change, { patchset_id: ps2, author: 'dana', anchor: { path: 'src/checkout/handler.ts', line: 3 }, body: 'Import order: keep local imports last.', draft: true }));
    return { ported, outdated, replied, base, file, general, draft };
}
//# sourceMappingURL=ui-seed.js.map