// A planned switchover (docs/operations.md "Planned switchover") on a real S3-compatible store
// (Swift s3api, test/swift.ts) between real server processes: `cairn promote --switchover`
// while clients write tasks, changes and comments back to back. Every write the old writer
// answered 2xx is on the new writer, by id and content; every write refused 503 is on neither;
// the clients go on against the new writer. A write under way when the handover starts is
// waited for (forced: its body is held back until the handover is seen refusing others). A
// handover without the secret, or while the store does not answer, changes nothing and the
// writer goes on writing; a handed-over writer stays read-only across a restart.
import { expect } from 'chai';
import { request } from 'node:http';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { useSwift, type SwiftServer } from './swift.js';
import { api, cli, register, spawnServer, tempDir, until, type ChildServer } from './helpers.js';
import { write } from './archive-reads.js';

const R = (repo: number, rest = '') => `/v1/native/repository-authorities/${repo}${rest}`;
const URL_ = 's3://cairn-switchover/team/';
const SECRET = 'switchover-secret-0123456789abcdef';

function swiftEnv(swift: SwiftServer): Record<string, string> {
  return { AWS_ACCESS_KEY_ID: swift.accessKeyId, AWS_SECRET_ACCESS_KEY: swift.secretAccessKey, AWS_REGION: swift.region, AWS_ENDPOINT_URL_S3: swift.endpoint };
}

const bearer = { authorization: `Bearer ${SECRET}` };
const health = async (url: string): Promise<any> => (await api(url, 'GET', '/healthz')).json;

/** Every row of a paged list. */
async function all(url: string, p: string, key: string): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  do {
    const res: { status: number; text: string; json: any } = await api(url, 'GET', `${p}?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { contract: false });
    expect(res.status, res.text).to.equal(200);
    rows.push(...res.json[key]);
    cursor = res.json.next_cursor;
  } while (cursor);
  return rows;
}

interface Attempt {
  kind: 'task' | 'change' | 'comment';
  repo: number;
  content: string;
  server: string;
  status: number;
  id?: string;
  error?: string;
}

/** What a server holds of the records the clients write: titles and comment bodies, by repository. */
async function contents(url: string, repos: number[], changeOf: Map<number, string>): Promise<Set<string>> {
  const out = new Set<string>();
  for (const repo of repos) {
    for (const t of await all(url, R(repo, '/tasks'), 'tasks')) out.add(`${repo}/task/${t.title}`);
    for (const c of await all(url, R(repo, '/changes'), 'changes')) out.add(`${repo}/change/${c.title}`);
    for (const th of await all(url, R(repo, `/changes/${changeOf.get(repo)}/threads`), 'threads')) {
      for (const c of th.comments) out.add(`${repo}/comment/${c.body}`);
    }
  }
  return out;
}

describe('cairn promote --switchover: a planned switchover without loss, on Swift s3api', function () {
  this.timeout(900_000);
  const swift = useSwift();
  let env: Record<string, string>;
  let secretFile: string;
  let writer: ChildServer;
  let writerDir: string;
  let writerArgs: string[];
  let standby: ChildServer;
  const repos: number[] = [];
  /** The change every comment goes to, per repository. */
  const changeOf = new Map<number, string>();
  const patchsetOf = new Map<number, string>();
  const children: ChildServer[] = [];

  before(async () => {
    env = swiftEnv(swift());
    const admin = new S3Client({ region: swift().region, endpoint: swift().endpoint, forcePathStyle: true, credentials: { accessKeyId: swift().accessKeyId, secretAccessKey: swift().secretAccessKey } });
    await admin.send(new CreateBucketCommand({ Bucket: 'cairn-switchover' }));
    admin.destroy();
    secretFile = path.join(tempDir(), 'promote-secret');
    await fsp.writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
    writerDir = path.join(tempDir(), 'writer');
    writerArgs = ['--no-ui', '--archive', URL_, '--archive-interval-ms', '200', '--promote-secret-file', secretFile];
    writer = await spawnServer(writerDir, writerArgs, true, env);
    children.push(writer);
    for (const name of ['alpha', 'beta']) {
      const repo = await register(writer.url, name);
      repos.push(repo);
      await write(writer.url, repo, 1);
      const changes = await all(writer.url, R(repo, '/changes'), 'changes');
      changeOf.set(repo, changes[0].change_id);
      patchsetOf.set(repo, (await all(writer.url, R(repo, `/changes/${changes[0].change_id}/patchsets`), 'patchsets'))[0].patchset_id);
    }
    standby = await spawnServer(path.join(tempDir(), 'standby'), ['--no-ui', '--follow', URL_, '--follow-interval-ms', '200', '--promote-secret-file', secretFile], true, env);
    children.push(standby);
  });
  after(() => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  });

  it('refuses a handover and a takeover without the secret, and changes nothing', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-secret-at-all-0000' }] as Record<string, string>[]) {
      const h = await api(writer.url, 'POST', '/archive/handover', { json: { successor: standby.url }, headers, contract: false });
      expect(h.status, h.text).to.equal(401);
      expect(h.json.error).to.match(/promotion secret/);
      expect(h.text).to.not.include(SECRET);
      const t = await api(standby.url, 'POST', '/archive/takeover', { json: { archive_id: '0'.repeat(32), repositories: [], access_log_length: null }, headers, contract: false });
      expect(t.status, t.text).to.equal(401);
    }
    const still = await api(writer.url, 'POST', R(repos[0]!, '/tasks'), { json: { title: 'still writable', intent: 'i' } });
    expect(still.status, still.text).to.equal(200);
    expect((await health(writer.url)).archive.state).to.not.equal('handed_over');
    expect(JSON.parse(await fsp.readFile(path.join(writerDir, 'archive.json'), 'utf8')).handed_over).to.equal(undefined);
    expect((await health(standby.url)).follow.state).to.be.oneOf(['following', 'error']);
    // A bad body from a caller with the secret: 400, nothing changes either.
    const bad = await api(writer.url, 'POST', '/archive/handover', { json: { successor: 'ftp://x/' }, headers: bearer, contract: false });
    expect(bad.status, bad.text).to.equal(400);
    const again = await api(writer.url, 'POST', R(repos[0]!, '/tasks'), { json: { title: 'still writable 2', intent: 'i' } });
    expect(again.status, again.text).to.equal(200);
  });

  it('a handover while the store does not answer fails 503 naming why; the writer keeps its data and writes again', async () => {
    const before = await api(writer.url, 'POST', R(repos[0]!, '/tasks'), { json: { title: 'before the outage', intent: 'i' } });
    expect(before.status, before.text).to.equal(200);
    await swift().pause();
    try {
      const h = await api(writer.url, 'POST', '/archive/handover', { json: { successor: standby.url, timeout_seconds: 2 }, headers: bearer, contract: false });
      expect(h.status, h.text).to.equal(503);
      expect(h.json.error).to.match(/^not handed over: .*did not take every commit within 2 s.*accepts writes again/);
      // Writes again at once, the store still down: commits never wait for the archive.
      const after = await api(writer.url, 'POST', R(repos[0]!, '/tasks'), { json: { title: 'after the failed handover', intent: 'i' } });
      expect(after.status, after.text).to.equal(200);
      const got = await api(writer.url, 'GET', R(repos[0]!, `/tasks/${before.json.task.task_id}`));
      expect(got.json.task.title).to.equal('before the outage');
      expect(JSON.parse(await fsp.readFile(path.join(writerDir, 'archive.json'), 'utf8')).handed_over).to.equal(undefined);
      expect((await health(writer.url)).archive.state).to.not.equal('handed_over');
    } finally {
      await swift().resume();
    }
    // A switchover refused at the handover does not promote the standby.
    expect((await health(standby.url)).follow.state).to.be.oneOf(['following', 'error']);
  });

  it('switches over under load: every write the old writer acknowledged is on the new one, none it refused is anywhere', async () => {
    let target = writer.url;
    let switched = false;
    const attempts: Attempt[] = [];
    let seq = 0;
    let firstRefusal: (() => void) | null = null;
    const refused = new Promise<void>((resolve) => { firstRefusal = resolve; });
    const attempt = async (client: number, kind: Attempt['kind'], repo: number, lastTask: string | null): Promise<Attempt> => {
      const server = target;
      const content = `c${client}-${kind}-${++seq}`;
      const res = kind === 'task' ? await api(server, 'POST', R(repo, '/tasks'), { json: { title: content, intent: 'load' }, contract: false })
        : kind === 'change' ? await api(server, 'POST', R(repo, '/changes'), { json: { task_id: lastTask, title: content, base_line: 'dev' }, contract: false })
          : await api(server, 'POST', R(repo, `/changes/${changeOf.get(repo)}/comments`), { json: { author: `client${client}`, body: content, patchset_id: patchsetOf.get(repo) }, contract: false });
      const a: Attempt = { kind, repo, content, server, status: res.status };
      if (res.status === 200 || res.status === 201) a.id = kind === 'task' ? res.json.task.task_id : kind === 'change' ? res.json.change.change_id : res.json.comment.comment_id;
      else a.error = res.json?.error;
      if (res.status === 503 && server === writer.url) firstRefusal?.();
      attempts.push(a);
      return a;
    };
    /** One client: tasks, changes of its own tasks and comments, back to back, until 3 writes landed on the new writer. */
    const client = async (n: number): Promise<void> => {
      const repo = repos[n % repos.length]!;
      const kinds: Attempt['kind'][] = ['task', 'change', 'comment'];
      let lastTask: string | null = null;
      let onNew = 0;
      for (let i = 0; onNew < 3; i++) {
        const kind = lastTask === null ? 'task' : kinds[i % 3]!;
        const a = await attempt(n, kind, repo, lastTask);
        if (a.status === 200 || a.status === 201) {
          if (kind === 'task') lastTask = a.id!;
          if (a.server !== writer.url) onNew++;
        } else {
          expect(a.status, `${a.server} ${kind}: ${a.error}`).to.equal(503);
          // Refused before anything was written, naming where writes go now.
          expect(a.error).to.match(/handing the archive over to|handed over to/);
          expect(a.error).to.include(standby.url);
          if (!switched) await new Promise((r) => setTimeout(r, 20));
        }
      }
    };

    // A write under way when the handover starts: its headers are in (admitted), its body held back.
    const held = await heldWrite(writer.url, R(repos[0]!, '/tasks'), JSON.stringify({ title: 'held across the handover', intent: 'i' }));
    const failed: Error[] = [];
    const clients = [0, 1, 2, 3].map((n) => client(n).catch((err: Error) => { failed.push(err); throw err; }));
    clients.forEach((c) => c.catch(() => {}));
    await until('each client to land writes on the old writer', () => {
      if (failed.length) throw failed[0];
      return [0, 1, 2, 3].every((n) => attempts.filter((a) => a.content.startsWith(`c${n}-`) && a.status === 200).length >= 4);
    }, 120_000);
    // A standby in service: caught up with what the writer had shipped a moment ago (it trails the load by its lag).
    const committed = ((await health(writer.url)).archive.repositories as any[]).map((r) => [r.repository, BigInt(r.committed)] as const);
    await until('the standby to apply what the writer had committed under the load', async () => {
      const applied = new Map(((await health(standby.url)).follow.repositories as any[]).map((r) => [r.repository, BigInt(r.applied_commit)]));
      return committed.every(([repo, commit]) => (applied.get(repo) ?? -1n) >= commit);
    }, 180_000);
    let cliDone = false;
    const switchover = cli(['promote', '--server', standby.url, '--switchover', '--from', writer.url, '--secret-file', secretFile, '--json']).then((r) => { cliDone = true; return r; });
    await refused;
    // The handover waits for the write under way: it cannot have answered yet.
    expect(cliDone, 'the switchover finished while a write it had admitted was still under way').to.equal(false);
    const heldRes = await held.finish();
    expect(heldRes.status, heldRes.text).to.equal(200);
    const heldTask = JSON.parse(heldRes.text).task;
    const done = await switchover;
    expect(done.code, done.stderr).to.equal(0);
    const result = JSON.parse(done.stdout);
    target = standby.url;
    switched = true;
    if (process.env.SWITCHOVER_DEBUG) await fsp.writeFile(process.env.SWITCHOVER_DEBUG, `${writer.output()}\n=====\n${standby.output()}`);
    await Promise.all(clients);
    console.log(`      switchover: writes refused for ${result.pause_ms} ms (handover ${result.handover_ms} ms); ${attempts.filter((a) => a.server === writer.url && a.status === 200).length} writes acknowledged by the old writer, ${attempts.filter((a) => a.status === 503).length} refused`);

    // The standby took over at exactly the commits handed over.
    expect(result.handover.repositories.map((r: any) => r.repository)).to.deep.equal(repos);
    for (const r of result.handover.repositories) expect(r.manifest).to.match(new RegExp(`^repositories/${r.repository}/manifests/`));
    const applied = new Map(result.promotion.repositories.map((r: any) => [r.repository, r.applied_commit]));
    for (const r of result.handover.repositories) expect(applied.get(r.repository), `repository ${r.repository}`).to.equal(r.commit);
    expect(BigInt(result.promotion.generation) > BigInt(result.handover.generation)).to.equal(true);

    // Every acknowledged write is on the new writer, by id and content; the held one too.
    const acked = attempts.filter((a) => a.status === 200 || a.status === 201);
    expect(acked.filter((a) => a.server === writer.url).length).to.be.greaterThan(12);
    const commentsOnNew = new Map<string, string>();
    for (const repo of repos) {
      for (const th of await all(standby.url, R(repo, `/changes/${changeOf.get(repo)}/threads`), 'threads')) for (const c of th.comments) commentsOnNew.set(`${repo}/${c.comment_id}`, c.body);
    }
    for (const a of acked) {
      if (a.kind === 'comment') {
        expect(commentsOnNew.get(`${a.repo}/${a.id}`), `comment ${a.id} (${a.server})`).to.equal(a.content);
        continue;
      }
      const res = await api(standby.url, 'GET', R(a.repo, a.kind === 'task' ? `/tasks/${a.id}` : `/changes/${a.id}`), { contract: false });
      expect(res.status, `${a.kind} ${a.id} (${a.server}): ${res.text}`).to.equal(200);
      expect(a.kind === 'task' ? res.json.task.title : res.json.change.title).to.equal(a.content);
    }
    const heldOnNew = await api(standby.url, 'GET', R(repos[0]!, `/tasks/${heldTask.task_id}`));
    expect(heldOnNew.json.task.title).to.equal('held across the handover');

    // Every refused write is on neither server; the old writer holds nothing it did not hand over.
    const onNew = await contents(standby.url, repos, changeOf);
    const onOld = await contents(writer.url, repos, changeOf);
    const refusedAll = attempts.filter((a) => a.status === 503);
    expect(refusedAll.length).to.be.greaterThan(0);
    for (const a of refusedAll) {
      expect(onNew.has(`${a.repo}/${a.kind}/${a.content}`), `refused ${a.kind} ${a.content} is on the new writer`).to.equal(false);
      expect(onOld.has(`${a.repo}/${a.kind}/${a.content}`), `refused ${a.kind} ${a.content} is on the old writer`).to.equal(false);
    }
    for (const k of onOld) expect(onNew.has(k), `${k} of the old writer is missing on the new one`).to.equal(true);

    // The old writer refuses writes, naming the new one; /healthz says it handed over.
    const late = await api(writer.url, 'POST', R(repos[0]!, '/tasks'), { json: { title: 'too late', intent: 'i' }, contract: false });
    expect(late.status, late.text).to.equal(503);
    expect(late.headers.get('retry-after')).to.equal('1');
    expect(late.json.error).to.match(/^handed over to /).and.include(standby.url);
    expect((await health(writer.url)).archive.state).to.equal('handed_over');
    // A second handover answers the same.
    const again = await api(writer.url, 'POST', '/archive/handover', { json: { successor: standby.url }, headers: bearer });
    expect(again.status, again.text).to.equal(200);
    expect(again.json).to.deep.equal(result.handover);
  });

  it('a handed-over writer, restarted, stays read-only and answers the same handover', async () => {
    const handed = JSON.parse(await fsp.readFile(path.join(writerDir, 'archive.json'), 'utf8')).handed_over;
    expect(handed.successor).to.equal(standby.url);
    writer.proc.kill('SIGTERM');
    await writer.exited;
    writer = await spawnServer(writerDir, writerArgs, true, env);
    children.push(writer);
    const res = await api(writer.url, 'POST', R(repos[0]!, '/tasks'), { json: { title: 'after restart', intent: 'i' }, contract: false });
    expect(res.status, res.text).to.equal(503);
    expect(res.json.error).to.match(/^handed over to /).and.include(standby.url).and.match(/cairn archive reclaim/);
    const reg = await api(writer.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'gamma', namespace: '', policy_flags: 0 }, contract: false });
    expect(reg.status, reg.text).to.equal(503);
    await until('the restarted writer to report it handed over', async () => (await health(writer.url)).archive?.state === 'handed_over', 60_000);
    const again = await api(writer.url, 'POST', '/archive/handover', { json: {}, headers: bearer });
    expect(again.status, again.text).to.equal(200);
    expect(again.json).to.deep.equal(handed);
    // Reads still serve.
    const tasks = await api(writer.url, 'GET', R(repos[0]!, '/tasks'));
    expect(tasks.status).to.equal(200);
  });
});

/**
 * A POST whose headers are sent (the server admits it) and whose body waits for `finish()`;
 * a GET answered afterwards on another connection shows the headers were read first.
 */
async function heldWrite(base: string, p: string, body: string): Promise<{ finish(): Promise<{ status: number; text: string }> }> {
  const url = new URL(p, base);
  const bytes = Buffer.from(body);
  let answer!: Promise<{ status: number; text: string }>;
  const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) } });
  answer = new Promise((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  req.write(bytes.subarray(0, 5));
  await new Promise((r) => setTimeout(r, 50));
  await api(base, 'GET', '/healthz');
  return {
    finish: async () => {
      req.end(bytes.subarray(5));
      return answer;
    },
  };
}
