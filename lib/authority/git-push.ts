// Push for review (docs/git.md "Push for review"): `git push URL HEAD:refs/for/<line>`. The
// push's objects are received by `git receive-pack` into a quarantine — a temporary bare
// repository whose objects/info/alternates names the shadow repository's objects, so a client
// sends only what the served line does not hold — and each pushed commit is read from there,
// converted into cairn trees, blobs and a snapshot, and written with its task, change and
// patchset in ONE commit of the store (./workflow/push-review.ts). The quarantine is removed
// after the push (and swept at startup): nothing of it is ever visible but what that commit wrote.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { blobId, encodeSnapshot, encodeTree, MAX_MESSAGE_BYTES, refusedEntryName, sha256Hex, validateEntryName, type TreeEntry } from '../domain/content.js';
import { CairnError, Invalid, TooLarge } from '../domain/errors.js';
import { GIT_COMMIT_ID, gitModeKind, messageText, parseCommit, snapshotMessage, type GitCommitIdRecord, type Gitlink } from '../domain/git.js';
import { changeIdTrailer, reviewTarget, titleAndBody } from '../domain/git-push.js';
import { sizeFromEntries, pathsOf } from '../domain/tree-size.js';
import { MAX_TITLE_CHARS } from '../domain/workflow/rules.js';
import { crashPoint } from '../store/crash-point.js';
import type { Authority } from './authority.js';
import type { Log } from './logger.js';
import { commitPushedPatchset, type PushedResult } from './workflow/push-review.js';
import type { BuiltObjects } from './workflow/server-objects.js';

/** Bytes of a push (its body as sent, and again once gzip is undone); CAIRN_GIT_PUSH_MAX_BYTES changes it. */
export const pushLimit = (): number => Number(process.env.CAIRN_GIT_PUSH_MAX_BYTES) || 512 * 1024 * 1024;
/** How long `git receive-pack` may take; CAIRN_GIT_PUSH_TIMEOUT_S changes it. */
const pushTimeoutMs = (): number => (Number(process.env.CAIRN_GIT_PUSH_TIMEOUT_S) || 600) * 1000;
/** The head of the body read for its commands (the commands come first; a pkt-line is at most 64 KiB). */
const COMMANDS_HEAD = 1024 * 1024;
/** receive-pack's own report is read only for its unpack status. */
const MAX_REPORT = 1024 * 1024;

const gitBinary = (): string => process.env.CAIRN_GIT || 'git';

export interface PushCommandLike { oldId: string; newId: string; ref: string }

export type PushOutcome =
  | { ref: string; ok: true; result: PushedResult; notes: string[] }
  | { ref: string; ok: false; reason: string };

export interface PushReceipt {
  /** `ok`, or why git could not take the pack (every command then fails). */
  unpack: string;
  outcomes: PushOutcome[];
  capabilities: string[];
}

export interface ReceiveOptions {
  /** The shadow repository's directory: its objects are the quarantine's alternates. */
  shadowDir: string;
  /** Where quarantines are made (Layout.gitQuarantineDir). */
  quarantineRoot: string;
  /** The request body, gzip already undone. */
  body: Readable;
  /** The commands and capabilities at the head of a receive-pack request (pkt-lines up to a flush). */
  parse: (head: Buffer) => { commands: PushCommandLike[]; capabilities: string[]; complete: boolean };
  /** The caller's identity (`--ui-identity-header`), or null: the commit's author. */
  identity: string | null;
  log: Log;
  /** Aborted when the client goes away: git is stopped, nothing is written. */
  signal?: AbortSignal;
}

/** The environment of every git run here: nothing of the server's own. */
function gitEnv(home: string, config: [string, string][]): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  return env;
}

/** Receive one push for review into a quarantine and write each `refs/for/*` command. */
export async function receivePush(authority: Authority, o: ReceiveOptions): Promise<PushReceipt> {
  const id = randomBytes(12).toString('hex');
  await fsp.mkdir(o.quarantineRoot, { recursive: true });
  const dir = path.join(o.quarantineRoot, `${id}.git`);
  const bodyFile = path.join(o.quarantineRoot, `${id}.body`);
  try {
    await makeQuarantine(dir, o.shadowDir);
    const head = await spool(o.body, bodyFile, pushLimit());
    const parsed = o.parse(head);
    if (!parsed.complete) throw new Invalid('malformed push request: no end of its commands');
    // git's probe before a large push names no command; a push with no refs/for/ command has
    // nothing to receive: its commands are refused without running git.
    const unpack = parsed.commands.some((c) => c.ref.startsWith('refs/for/')) ? await runReceivePack(dir, bodyFile, o.signal) : 'ok';
    crashPoint('git-push:received');
    const outcomes: PushOutcome[] = [];
    if (unpack !== 'ok') {
      for (const c of parsed.commands) outcomes.push({ ref: c.ref, ok: false, reason: 'unpacker error: nothing was written' });
      return { unpack, outcomes, capabilities: parsed.capabilities };
    }
    const objects = new GitObjects(dir);
    try {
      for (const c of parsed.commands) outcomes.push(await pushOne(authority, objects, c, o));
    } finally {
      objects.close();
    }
    return { unpack, outcomes, capabilities: parsed.capabilities };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
    await fsp.rm(bodyFile, { force: true });
  }
}

/** A bare repository git reads, borrowing every object of the shadow (objects/info/alternates). */
async function makeQuarantine(dir: string, shadowDir: string): Promise<void> {
  for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) await fsp.mkdir(path.join(dir, d), { recursive: true });
  await fsp.writeFile(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  await fsp.writeFile(path.join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n');
  await fsp.writeFile(path.join(dir, 'objects', 'info', 'alternates'), `${path.join(shadowDir, 'objects')}\n`);
}

/** Write the body to `file` (at most `limit` bytes: past it TooLarge); its first bytes are returned for the commands. */
async function spool(body: Readable, file: string, limit: number): Promise<Buffer> {
  const head: Buffer[] = [];
  let headBytes = 0;
  let total = 0;
  const out = createWriteStream(file);
  await pipeline(body, async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      total += chunk.length;
      if (total > limit) throw new TooLarge(`the push is larger than ${limit} bytes, the most this server takes`);
      if (headBytes < COMMANDS_HEAD) {
        head.push(chunk);
        headBytes += chunk.length;
      }
      yield chunk;
    }
  }, out);
  return Buffer.concat(head);
}

/**
 * `git receive-pack --stateless-rpc` on the quarantine: it checks every object it is sent
 * (receive.fsckObjects), refuses a pack over the push limit, and runs no hook. Its own report
 * is never the client's: only its unpack status is read from it ("ok", or git's reason).
 */
function runReceivePack(dir: string, bodyFile: string, signal?: AbortSignal): Promise<string> {
  const env = gitEnv(path.dirname(dir), [
    ['receive.fsckObjects', 'true'],
    ['receive.maxInputSize', String(pushLimit())],
    ['core.hooksPath', '/dev/null'],
    ['receive.denyDeletes', 'true'],
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(gitBinary(), ['receive-pack', '--stateless-rpc', dir], { env, cwd: path.dirname(dir), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = Buffer.alloc(0);
    let stderr = '';
    let timedOut = false;
    const kill = () => {
      if (child.pid !== undefined && child.exitCode === null) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    };
    const timer = setTimeout(() => { timedOut = true; kill(); }, pushTimeoutMs());
    const onAbort = () => kill();
    signal?.addEventListener('abort', onAbort);
    child.stdout.on('data', (c: Buffer) => { if (stdout.length < MAX_REPORT) stdout = Buffer.concat([stdout, c]); });
    child.stderr.on('data', (c: Buffer) => { if (stderr.length < 4096) stderr += c.toString('utf8'); });
    child.stdin.on('error', () => { /* the child stopped reading: its exit says why */ });
    pipeline(createReadStream(bodyFile), child.stdin).catch(() => undefined);
    child.once('error', (err) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new Error(`git receive-pack could not be run (${gitBinary()}): ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(new Invalid('the client went away'));
      if (timedOut) return resolve(`the push took longer than ${pushTimeoutMs() / 1000} s`);
      const text = stdout.toString('latin1');
      const m = /unpack ([^\n\0]*)\n/.exec(text);
      if (m) return resolve(m[1] === 'ok' ? 'ok' : m[1].slice(0, 200));
      resolve(`git receive-pack failed (exit ${code}): ${stderr.trim().split('\n').pop()?.slice(0, 200) ?? ''}`);
    });
  });
}

/** One ref update of the push: refused, or written as a patchset. */
async function pushOne(authority: Authority, objects: GitObjects, c: PushCommandLike, o: ReceiveOptions): Promise<PushOutcome> {
  const refuse = (reason: string): PushOutcome => ({ ref: c.ref, ok: false, reason });
  const target = reviewTarget(c.ref);
  if ('refused' in target) {
    if (target.refused !== '') return refuse(target.refused);
    const heads = /^refs\/heads\/(.+)$/.exec(c.ref);
    if (heads) return refuse(`pushes to refs/heads/* are refused: lines move only through lands; push for review to refs/for/${heads[1]}`);
    return refuse('this repository is read-only: lines move only through lands');
  }
  if (/^0+$/.test(c.newId)) return refuse('a push for review cannot delete');
  const line = authority.store.line(target.line);
  if (!line) return refuse(`line ${target.line} does not exist`);
  if (line.status === 'archived') return refuse(`line ${target.line} is archived`);
  try {
    const converted = await convertCommit(authority, objects, c.newId, target.line);
    const text = messageText(converted.parsed);
    const { title, body } = titleAndBody(text, MAX_TITLE_CHARS);
    const author = o.identity ?? (converted.parsed.author.email.trim() || converted.parsed.author.name.trim());
    const result = await commitPushedPatchset(authority.store, authority.workflow, {
      line: target.line,
      base_snapshot_id: converted.base,
      snapshot: converted.snapshot,
      built: converted.built,
      sizes: converted.sizes,
      commit: { commit_id: c.newId, raw: converted.raw, gitlinks: converted.gitlinks },
      title: title === '' ? `Pushed commit ${c.newId.slice(0, 12)}` : title,
      intent: body,
      summary: text.trim(),
      author,
      change_key: changeIdTrailer(text),
      task_id: target.task_id,
      change_id: target.change_id,
    });
    const notes = converted.gitlinks.map((g) => `submodule ${g.path} (${g.commit_id.slice(0, 12)}) is kept with the git commit, not in the snapshot`);
    return { ref: c.ref, ok: true, result, notes };
  } catch (err) {
    if (err instanceof CairnError) return refuse(err.message.replace(/\s+/g, ' ').slice(0, 300));
    o.log.error({ ref: c.ref.slice(0, 200), error: (err as Error).message }, 'push for review failed');
    return refuse('the server failed to write this push (see its log)');
  }
}

interface Converted {
  raw: Buffer;
  parsed: ReturnType<typeof parseCommit>;
  base: string;
  snapshot: { id: string; bytes: Buffer; root_tree_id: string };
  built: BuiltObjects;
  sizes: Map<string, number>;
  gitlinks: Gitlink[];
}

/**
 * A pushed commit as cairn content: its tree as cairn trees and blobs (regular files,
 * executables, symlinks; gitlinks kept aside, as an import keeps them), and its snapshot, whose
 * one parent is the snapshot of the commit's first parent (found through the git map). A merge
 * commit's other parents are kept in its git commit only.
 */
async function convertCommit(authority: Authority, objects: GitObjects, commitId: string, line: string): Promise<Converted> {
  const store = authority.store;
  if (!/^[0-9a-f]{40}$/.test(commitId)) throw new Invalid(`${commitId.slice(0, 80)} is not a sha1 commit id: the shadow repository is sha1`);
  const { type, data: raw } = await objects.read(commitId);
  if (type !== 'commit') throw new Invalid(`${commitId} is a ${type}, not a commit`);
  const parsed = parseCommit(raw);
  const known = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, commitId);
  if (known) throw new Invalid(`no new changes: ${commitId.slice(0, 12)} is already the commit of snapshot ${known.snapshot_id.slice(0, 12)}`);
  const parent = parsed.parent_ids[0];
  if (parent === undefined) throw new Invalid(`${commitId.slice(0, 12)} has no parent: a change is reviewed against ${line}; fetch and rebase onto ${line}`);
  const base = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, parent);
  if (!base || !store.hasSnapshot(base.snapshot_id)) throw new Invalid(`parent ${parent} is not a commit cairn knows: fetch and rebase onto ${line}`);

  const built: BuiltObjects = { trees: new Map(), blobs: new Map() };
  const sizes = new Map<string, number>();
  const gitlinks: Gitlink[] = [];
  const blobIds = new Map<string, string>();
  const trees = new Map<string, { id: string; size: number }>();
  let paths = 0;
  const maxPaths = store.maxSnapshotPaths;
  const walk = async (gitTree: string, prefix: string): Promise<{ id: string; size: number }> => {
    const cached = trees.get(gitTree);
    if (cached && !treeHasGitlinks.has(gitTree)) {
      paths += cached.size - 1;
      if (paths > maxPaths) throw new Invalid(`the commit's tree holds more than ${maxPaths} paths, the most a snapshot holds`);
      return cached;
    }
    const t = await objects.read(gitTree);
    if (t.type !== 'tree') throw new Invalid(`${gitTree} is a ${t.type}, not a tree`);
    const entries: TreeEntry[] = [];
    const sizeOf = new Map<string, number>();
    let links = false;
    for (const e of parseGitTree(t.data)) {
      if (!isUtf8(e.name)) throw new Invalid(`the path ${JSON.stringify(prefix + e.name.toString('latin1'))} is not UTF-8: cairn names paths in UTF-8`);
      const name = e.name.toString('utf8');
      const where = prefix + name;
      try {
        validateEntryName(name);
      } catch (err) {
        throw new Invalid(`the path ${JSON.stringify(where)} cannot be stored: ${(err as Error).message}`);
      }
      const refused = refusedEntryName(name, prefix === '');
      if (refused) throw new Invalid(`the path ${JSON.stringify(where)} cannot be stored: it ${refused}`);
      const kind = gitModeKind(e.mode);
      if (kind === 'gitlink') {
        gitlinks.push({ path: where, commit_id: e.id });
        links = true;
        continue;
      }
      if (++paths > maxPaths) throw new Invalid(`the commit's tree holds more than ${maxPaths} paths, the most a snapshot holds`);
      if (kind === 'directory') {
        const before = gitlinks.length;
        const sub = await walk(e.id, `${where}/`);
        if (gitlinks.length > before) links = true;
        entries.push({ name, kind, id: sub.id });
        sizeOf.set(sub.id, sub.size);
        continue;
      }
      let id = blobIds.get(e.id);
      if (id === undefined) {
        const b = await objects.read(e.id);
        if (b.type !== 'blob') throw new Invalid(`${where} names a ${b.type}, not a blob`);
        id = blobId(b.data);
        if (!store.has('blob', id)) built.blobs.set(id, b.data);
        blobIds.set(e.id, id);
      }
      entries.push({ name, kind, id });
    }
    const bytes = encodeTree(entries);
    const id = sha256Hex(bytes);
    const size = sizeFromEntries(entries, (x) => sizeOf.get(x) ?? 1);
    if (!store.has('tree', id)) {
      built.trees.set(id, bytes);
      sizes.set(id, size);
    }
    if (links) treeHasGitlinks.add(gitTree);
    trees.set(gitTree, { id, size });
    return { id, size };
  };
  // A git tree met again is the same cairn tree; one holding gitlinks is walked again so each path is recorded.
  const treeHasGitlinks = new Set<string>();
  const root = await walk(parsed.tree_id, '');
  if (pathsOf(root.size) > maxPaths) throw new Invalid(`the commit's tree holds more than ${maxPaths} paths, the most a snapshot holds`);
  const bytes = encodeSnapshot({
    root_tree_id: root.id,
    parent_snapshot_ids: [base.snapshot_id],
    created_at_s: Math.max(0, parsed.committer.time),
    message: snapshotMessage(parsed, MAX_MESSAGE_BYTES),
  });
  gitlinks.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  return { raw, parsed, base: base.snapshot_id, snapshot: { id: sha256Hex(bytes), bytes, root_tree_id: root.id }, built, sizes, gitlinks };
}

/** A git tree object's entries: `<mode> <name>\0<20-byte id>`. */
function parseGitTree(data: Buffer): { mode: string; name: Buffer; id: string }[] {
  const out: { mode: string; name: Buffer; id: string }[] = [];
  let at = 0;
  while (at < data.length) {
    const sp = data.indexOf(0x20, at);
    const nul = sp < 0 ? -1 : data.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > data.length) throw new Invalid('a pushed tree object is malformed');
    out.push({ mode: data.toString('latin1', at, sp), name: data.subarray(sp + 1, nul), id: data.toString('hex', nul + 1, nul + 21) });
    at = nul + 21;
  }
  return out;
}

/** `git cat-file --batch` on the quarantine (the pushed objects and, through alternates, the shadow's). */
class GitObjects {
  private readonly proc: ChildProcessWithoutNullStreams;
  private buffered: Buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | null = null;
  private stderr = '';

  constructor(dir: string) {
    this.proc = spawn(gitBinary(), ['cat-file', '--batch'], { env: { ...gitEnv(path.dirname(dir), []), GIT_DIR: dir }, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc.stdout.on('data', (c: Buffer) => { this.buffered = this.buffered.length ? Buffer.concat([this.buffered, c]) : c; this.poke(); });
    this.proc.stdout.on('end', () => { this.ended = true; this.poke(); });
    this.proc.stderr.on('data', (c: Buffer) => { if (this.stderr.length < 2048) this.stderr += c.toString('utf8'); });
    this.proc.on('error', () => { this.ended = true; this.poke(); });
    this.proc.stdin.on('error', () => undefined);
  }

  private poke(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private async fill(n: number): Promise<void> {
    while (this.buffered.length < n) {
      if (this.ended) throw new Error(`git cat-file ended early: ${this.stderr.trim().slice(0, 200)}`);
      await new Promise<void>((resolve) => { this.wake = resolve; });
    }
  }

  async read(id: string): Promise<{ type: string; data: Buffer }> {
    this.proc.stdin.write(`${id}\n`);
    let nl = -1;
    for (;;) {
      nl = this.buffered.indexOf(0x0a);
      if (nl >= 0) break;
      await this.fill(this.buffered.length + 1);
    }
    const header = this.buffered.toString('latin1', 0, nl);
    this.buffered = this.buffered.subarray(nl + 1);
    if (header.endsWith(' missing')) throw new Invalid(`object ${id} was not sent with the push`);
    const [, type, size] = header.split(' ');
    const length = Number(size);
    await this.fill(length + 1);
    const data = Buffer.from(this.buffered.subarray(0, length));
    this.buffered = this.buffered.subarray(length + 1);
    return { type, data };
  }

  close(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}
