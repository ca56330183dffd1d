// Push for review (docs/git.md "Push for review"): `git push URL HEAD:refs/for/<line>`. The
// push's objects are received by `git receive-pack` into a quarantine — a temporary bare
// repository whose objects/info/alternates names the shadow repository's objects, so a client
// sends only what the served line does not hold — and each pushed commit is read from there,
// converted into cairn trees, blobs and a snapshot, and written with its task, change and
// patchset in ONE commit of the store (./workflow/push-review.ts). The quarantine is removed
// after the push (and swept at startup): nothing of it is ever visible but what that commit wrote.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { encodeSnapshot, encodeTree, MAX_MESSAGE_BYTES, refusedEntryName, sha256Hex, validateEntryName, type TreeEntry } from '../domain/content.js';
import { CairnError, Invalid, TooLarge } from '../domain/errors.js';
import { GIT_COMMIT_ID, gitModeKind, MAX_GIT_COMMIT_BYTES, messageText, parseCommit, snapshotMessage, type GitCommitIdRecord, type Gitlink } from '../domain/git.js';
import { changeIdTrailer, pushOptions, reviewTarget, titleAndBody, type PushAsk } from '../domain/git-push.js';
import { sizeFromEntries, pathsOf } from '../domain/tree-size.js';
import { requirePathDepth } from '../domain/tree-depth.js';
import { MAX_TEXT_CHARS, MAX_TITLE_CHARS } from '../domain/workflow/rules.js';
import { crashPoint } from '../store/crash-point.js';
import { decodeObjectFrame, MAX_TREE_BYTES, PACK_KIND_OBJECT, type PackEntry } from '../store/pack.js';
import type { StreamingPackWriter } from '../store/pack-writer.js';
import type { Authority } from './authority.js';
import type { Log } from './logger.js';
import { commitPushedSeries, type PushedPatchset, type PushedResult, type PushedSide } from './workflow/push-review.js';
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
  /** `change_key`: the commit's Change-Id trailer, or null (the pusher is told how to get one). */
  | { ref: string; ok: true; result: PushedResult; notes: string[]; change_key: string | null; below?: { result: PushedResult; change_key: string | null }[] }
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
  /**
   * The one ref the push's URL serves (`refs/heads/<line>`), or undefined when it serves every
   * ref: a pushed commit borrows from the shadow only what that reaches (firstBorrowedUnserved).
   */
  servedRef: string | undefined;
  /** Where quarantines are made (Layout.gitQuarantineDir). */
  quarantineRoot: string;
  /** The request body, gzip already undone. */
  body: Readable;
  /** The commands and capabilities at the head of a receive-pack request (pkt-lines up to a flush). */
  parse: (head: Buffer) => { commands: PushCommandLike[]; capabilities: string[]; options?: string[]; complete: boolean };
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
  try {
    await makeQuarantine(dir);
    const body = limited(o.body, pushLimit())[Symbol.asyncIterator]();
    const { head, parsed } = await readCommands(body, o.parse);
    // git's probe before a large push names no command; a push with no refs/for/ command has
    // nothing to receive: its commands are refused without running git (its pack is read and dropped).
    let unpack = 'ok';
    if (parsed.commands.some((c) => c.ref.startsWith('refs/for/'))) unpack = await runReceivePack(dir, o.shadowDir, head, body, o.signal);
    else for (let next = await body.next(); !next.done; next = await body.next());
    crashPoint('git-push:received');
    const outcomes: PushOutcome[] = [];
    if (unpack !== 'ok') {
      for (const c of parsed.commands) outcomes.push({ ref: c.ref, ok: false, reason: 'unpacker error: nothing was written' });
      return { unpack, outcomes, capabilities: parsed.capabilities };
    }
    const objects = new GitObjects(dir, o.shadowDir);
    try {
      const asked = pushOptions(parsed.options ?? [], MAX_TEXT_CHARS);
      for (const c of parsed.commands) outcomes.push('refused' in asked ? { ref: c.ref, ok: false, reason: asked.refused } : await pushOne(authority, objects, c, o, dir, asked));
    } finally {
      objects.close();
    }
    return { unpack, outcomes, capabilities: parsed.capabilities };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

/**
 * A bare repository holding only what a push brings. The git runs that read it borrow every
 * object of the shadow through `borrowing` (GIT_ALTERNATE_OBJECT_DIRECTORIES, not an alternates
 * file), so one run without it sees the pushed objects alone (firstBorrowedUnserved).
 */
async function makeQuarantine(dir: string): Promise<void> {
  for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) await fsp.mkdir(path.join(dir, d), { recursive: true });
  await fsp.writeFile(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  await fsp.writeFile(path.join(dir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n');
}

/** The environment entry through which git runs on a quarantine read the shadow's objects. */
const borrowing = (shadowDir: string): Record<string, string> => ({ GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(shadowDir, 'objects') });

/**
 * The first object `commitId` reaches that the push did not bring and the URL's served ref
 * (`servedRef` of the shadow; every branch when undefined) does not reach, or null. A line's URL
 * serves only what the line reaches (docs/git.md): a pushed tree naming a tree or blob of another
 * line by id must not borrow it from the shadow. git's client sends every object the advertised
 * refs do not reach, so an honest push always passes. Streams: `git rev-list --objects`
 * (borrowing) lists what the commit reaches beyond the served tips; `git cat-file
 * --batch-check` on the quarantine alone (not borrowing) says which of them the push lacks.
 */
async function firstBorrowedUnserved(dir: string, shadowDir: string, commitId: string, servedRef: string | undefined): Promise<string | null> {
  const shadowEnv = { ...gitEnv(path.dirname(shadowDir), []), GIT_DIR: shadowDir };
  const args = servedRef === undefined ? ['for-each-ref', '--format=%(objectname)', 'refs/heads/'] : ['rev-parse', '--verify', '-q', `${servedRef}^{commit}`];
  const tips = await new Promise<string[]>((resolve) => {
    const p = spawn(gitBinary(), args, { env: shadowEnv, cwd: shadowDir, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (c: Buffer) => { out += c.toString('latin1'); });
    p.once('error', () => resolve([]));
    p.once('close', (code) => resolve(code === 0 ? out.split('\n').filter((l) => /^[0-9a-f]{40}$/.test(l)) : []));
  });
  const env = { ...gitEnv(path.dirname(dir), []), GIT_DIR: dir };
  const list = spawn(gitBinary(), ['rev-list', '--objects', '--stdin'], { env: { ...env, ...borrowing(shadowDir) }, cwd: dir, stdio: ['pipe', 'pipe', 'ignore'] });
  const check = spawn(gitBinary(), ['cat-file', '--batch-check=%(objectname) %(objecttype)'], { env, cwd: dir, stdio: ['pipe', 'pipe', 'ignore'] });
  const stop = () => { list.kill('SIGKILL'); check.kill('SIGKILL'); };
  list.stdin.on('error', () => {});
  check.stdin.on('error', () => {});
  list.stdin.end([commitId, ...tips.map((t) => `^${t}`)].join('\n') + '\n');
  const listed = new Promise<number | null>((resolve) => { list.once('error', () => resolve(null)); list.once('close', (code) => resolve(code)); });
  // rev-list's "<id> <path>" lines become cat-file's ids, streamed (never held whole).
  void pipeline(list.stdout, async function* (lines: AsyncIterable<Buffer>) {
    let rest = '';
    for await (const chunk of lines) {
      rest += chunk.toString('latin1');
      const cut = rest.lastIndexOf('\n');
      if (cut < 0) continue;
      yield rest.slice(0, cut + 1).split('\n').filter((l) => l !== '').map((l) => `${l.slice(0, 40)}\n`).join('');
      rest = rest.slice(cut + 1);
    }
    if (rest.trim() !== '') yield `${rest.slice(0, 40)}\n`;
  }, check.stdin).catch(() => {});
  let found: string | null = null;
  let rest = '';
  for await (const chunk of check.stdout) {
    rest += (chunk as Buffer).toString('latin1');
    const m = / missing\n/.exec(rest);
    if (m) {
      found = rest.slice(rest.lastIndexOf('\n', m.index) + 1, m.index);
      stop();
      break;
    }
    rest = rest.slice(rest.lastIndexOf('\n') + 1);
  }
  const code = await listed;
  if (found !== null) return found;
  // rev-list failing (an object missing everywhere): nothing of it is served either.
  if (code !== 0) return commitId;
  return null;
}

/** The body, failing with TooLarge past `limit` bytes (the limit again once gzip is undone). */
async function* limited(body: AsyncIterable<Buffer>, limit: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) throw new TooLarge(`the push is larger than ${limit} bytes, the most this server takes`);
    yield chunk;
  }
}

/** Read the body up to the end of its commands (at most COMMANDS_HEAD bytes); the rest stays unread. */
async function readCommands(body: AsyncIterator<Buffer>, parse: ReceiveOptions['parse']): Promise<{ head: Buffer; parsed: ReturnType<ReceiveOptions['parse']> }> {
  let head: Buffer = Buffer.alloc(0);
  for (;;) {
    const next = await body.next();
    if (!next.done) head = head.length ? Buffer.concat([head, next.value]) : next.value;
    const parsed = parse(head);
    if (parsed.complete || next.done || head.length >= COMMANDS_HEAD) {
      if (!parsed.complete) throw new Invalid('malformed push request: no end of its commands');
      return { head, parsed };
    }
  }
}

/**
 * `git receive-pack --stateless-rpc` on the quarantine, the body streamed into it as it arrives
 * (never held whole, never spooled): git checks every object it is sent (receive.fsckObjects),
 * refuses a pack over the push limit, and runs no hook. Its own report is never the client's:
 * only its unpack status is read from it ("ok", or git's reason). A body that fails (over the
 * limit, cut short) stops git and is the push's failure.
 */
function runReceivePack(dir: string, shadowDir: string, head: Buffer, rest: AsyncIterator<Buffer>, signal?: AbortSignal): Promise<string> {
  const env = { ...borrowing(shadowDir), ...gitEnv(path.dirname(dir), [
    ['receive.fsckObjects', 'true'],
    ['receive.maxInputSize', String(pushLimit())],
    ['core.hooksPath', '/dev/null'],
    ['receive.denyDeletes', 'true'],
    // Always kept as a pack: unpacking into loose objects skips those the shadow holds already,
    // and firstBorrowedUnserved must see every object the push brought.
    ['receive.unpackLimit', '1'],
    // The client's push options (`-o noselect`) follow its commands when it asked for them: git
    // must read them as options, not as the start of the pack (parsePushCommands reads them too).
    ['receive.advertisePushOptions', 'true'],
  ]) };
  return new Promise((resolve, reject) => {
    const child = spawn(gitBinary(), ['receive-pack', '--stateless-rpc', dir], { env, cwd: path.dirname(dir), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let report = '';
    let stderr = '';
    let timedOut = false;
    let bodyFailure: unknown = null;
    const kill = () => {
      if (child.pid !== undefined && child.exitCode === null) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      }
    };
    const timer = setTimeout(() => { timedOut = true; kill(); }, pushTimeoutMs());
    const onAbort = () => kill();
    signal?.addEventListener('abort', onAbort);
    child.stdout.on('data', (c: Buffer) => { if (report.length < MAX_REPORT) report += c.toString('latin1'); });
    child.stderr.on('data', (c: Buffer) => { if (stderr.length < 4096) stderr += c.toString('utf8'); });
    child.stdin.on('error', () => { /* the child stopped reading: its exit says why */ });
    async function* body(): AsyncGenerator<Buffer> {
      try {
        yield head;
        for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
      } catch (err) {
        bodyFailure = err;
        kill();
        throw err;
      }
    }
    pipeline(body(), child.stdin).catch(() => undefined);
    child.once('error', (err) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new Error(`git receive-pack could not be run (${gitBinary()}): ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return reject(new Invalid('the client went away'));
      if (bodyFailure !== null) return reject(bodyFailure);
      if (timedOut) return resolve(`the push took longer than ${pushTimeoutMs() / 1000} s`);
      const m = /unpack ([^\n\0]*)\n/.exec(report);
      if (m) return resolve(m[1] === 'ok' ? 'ok' : m[1].slice(0, 200));
      resolve(`git receive-pack failed (exit ${code}): ${stderr.trim().split('\n').pop()?.slice(0, 200) ?? ''}`);
    });
  });
}

/** One ref update of the push: refused, or written as a patchset. */
async function pushOne(authority: Authority, objects: GitObjects, c: PushCommandLike, o: ReceiveOptions, dir: string, asked: PushAsk): Promise<PushOutcome> {
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
  if (/^[0-9a-f]{40}$/.test(c.newId)) {
    const borrowed = await firstBorrowedUnserved(dir, o.shadowDir, c.newId, o.servedRef);
    const served = o.servedRef === undefined ? 'the served branches' : o.servedRef.replace(/^refs\/heads\//, '');
    if (borrowed !== null) return refuse(`object ${borrowed.slice(0, 40)} is neither in the push nor reachable from ${served}: push it`);
  }
  const converter = new Converter(authority, objects);
  let staged: { pack_id: string; entries: PackEntry[] } | null = null;
  try {
    // The commits the ref brings that cairn does not know, bottom first: one change each (a stack).
    const series = await converter.convertSeries(c.newId, target.line, maxSeries());
    staged = await converter.finishBlobs();
    if (series.length > 1 && target.change_id !== null) return refuse(`%change= names one change, and this push brings ${series.length} new commits (one change each): push the series without %change= (each commit's Change-Id finds its change)`);
    const items: PushedPatchset[] = [];
    const keys = new Set<string>();
    for (const converted of series) {
      const text = messageText(converted.parsed);
      const { title, body } = titleAndBody(text, MAX_TITLE_CHARS);
      const changeKey = changeIdTrailer(text);
      if (changeKey !== null && keys.has(changeKey)) return refuse(`two commits of the series have Change-Id ${changeKey}: each commit of a series is its own change; give one of them a new Change-Id`);
      if (changeKey !== null) keys.add(changeKey);
      const author = o.identity ?? (converted.parsed.author.email.trim() || converted.parsed.author.name.trim());
      items.push({
        line: target.line,
        base_snapshot_id: converted.base,
        snapshot: converted.snapshot,
        built: converter.built,
        sizes: converter.sizes,
        commit: { commit_id: converted.commit_id, raw: converted.raw, gitlinks: converted.gitlinks },
        blob_pack: staged,
        sides: converted.sides,
        title: title === '' ? `Pushed commit ${converted.commit_id.slice(0, 12)}` : title,
        intent: body,
        summary: asked.message ?? text.trim(),
        author,
        pushed_by: o.identity,
        change_key: changeKey,
        task_id: target.task_id,
        change_id: target.change_id,
        select: asked.select,
        reviewers: asked.reviewers,
        flags: { ...(asked.topic !== null ? { topic: asked.topic } : {}), ...(asked.wip !== null ? { wip: asked.wip } : {}), cc: asked.cc },
      });
    }
    const results = await commitPushedSeries(authority.store, authority.workflow, items);
    const notes = series.flatMap((s) => s.gitlinks.map((g) => `submodule ${g.path} (${g.commit_id.slice(0, 12)}) is kept with the git commit, not in the snapshot`));
    const below = results.slice(0, -1).map((result, i) => ({ result, change_key: items[i].change_key }));
    return { ref: c.ref, ok: true, result: results.at(-1)!, notes, change_key: items.at(-1)!.change_key, ...(below.length > 0 ? { below } : {}) };
  } catch (err) {
    if (err instanceof CairnError) return refuse(err.message.replace(/\s+/g, ' ').slice(0, 300));
    o.log.error({ ref: c.ref.slice(0, 200), error: (err as Error).message }, 'push for review failed');
    return refuse('the server failed to write this push (see its log)');
  } finally {
    await converter.discard();
    // Let go of the staged pack: one no commit adopted (the push was refused) goes once no other
    // push of the same bytes holds it.
    if (staged) {
      await authority.store.dropStagedPack(PACK_KIND_OBJECT, staged.pack_id).catch((err: Error) => o.log.warn({ pack_id: staged!.pack_id, error: err.message }, 'a staged pack of a refused push was not removed; it expires'));
    }
  }
}

interface Converted {
  commit_id: string;
  raw: Buffer;
  parsed: ReturnType<typeof parseCommit>;
  base: string;
  snapshot: { id: string; bytes: Buffer; root_tree_id: string };
  gitlinks: Gitlink[];
  sides: PushedSide[];
}

/** Commits one push for review may bring as a series (one change each); CAIRN_GIT_PUSH_MAX_SERIES changes it. */
export const maxSeries = (): number => Number(process.env.CAIRN_GIT_PUSH_MAX_SERIES) || 50;

/** Side commits one merge push may bring that cairn does not know; CAIRN_GIT_PUSH_MAX_SIDE_COMMITS changes it. */
const maxSideCommits = (): number => Number(process.env.CAIRN_GIT_PUSH_MAX_SIDE_COMMITS) || 1000;

/**
 * Pushed commits as cairn content. Trees are built in memory (their size follows the path
 * count, which is bounded); blobs stream from `git cat-file` into one pack on disk, each
 * compressed as it arrives, so a file of any size costs a chunk of memory, never its size.
 */
class Converter {
  readonly built: BuiltObjects = { trees: new Map(), blobs: new Map() };
  readonly sizes = new Map<string, number>();
  private pack: StreamingPackWriter | null = null;
  /** git blob id → cairn blob id. */
  private readonly blobIds = new Map<string, string>();
  /** git tree id → cairn tree (id, expanded size). */
  private readonly trees = new Map<string, { id: string; size: number }>();
  /** git trees holding gitlinks: walked again when met again, so each path is recorded. */
  private readonly treeHasGitlinks = new Set<string>();

  constructor(private readonly authority: Authority, private readonly objects: GitObjects) {}

  /** The staged pack of the blobs (null: none was new), or nothing when nothing was written. */
  async finishBlobs(): Promise<{ pack_id: string; entries: PackEntry[] } | null> {
    const pack = this.pack;
    this.pack = null;
    this.built.spooled = undefined;
    if (!pack) return null;
    const done = await pack.finish();
    if (!done) return null;
    // The diff of the revision reads what it needs from the staged pack.
    const byId = new Map(done.entries.map((e) => [e.id, e]));
    const file = this.authority.store.stagedPackFile(PACK_KIND_OBJECT, done.packId);
    this.built.spooled = {
      size: (id) => byId.get(id)?.raw_length,
      read: async (id) => {
        const e = byId.get(id);
        if (!e) return undefined;
        const handle = await fsp.open(file, 'r');
        try {
          const frame = Buffer.allocUnsafe(e.length);
          const { bytesRead } = await handle.read(frame, 0, e.length, e.offset);
          return decodeObjectFrame(e, frame.subarray(0, bytesRead), 'blob');
        } finally {
          await handle.close();
        }
      },
    };
    return { pack_id: done.packId, entries: done.entries };
  }

  async discard(): Promise<void> {
    const pack = this.pack;
    this.pack = null;
    await pack?.discard();
  }

  /**
   * The commits `tipId` brings that the git map lacks, bottom first (a series: one change each),
   * each converted: its tree as cairn trees and blobs (regular files, executables, symlinks;
   * gitlinks kept aside, as an import keeps them), and its snapshot, whose one parent is the
   * snapshot of the commit's first parent (the git map's, or the commit below it in the series).
   * The walk follows first parents down to a commit the map holds, at most `max` commits. The tip
   * may be a merge: its other parents are kept with it (the side commits the map lacks become
   * snapshots with their git commits); a merge below the tip is refused.
   */
  async convertSeries(tipId: string, line: string, max: number): Promise<Converted[]> {
    const store = this.authority.store;
    if (!/^[0-9a-f]{40}$/.test(tipId)) throw new Invalid(`${tipId.slice(0, 80)} is not a sha1 commit id: the shadow repository is sha1`);
    const chain: { id: string; raw: Buffer; parsed: ReturnType<typeof parseCommit> }[] = [];
    let id = tipId;
    for (;;) {
      const known = store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, id);
      if (known) {
        if (chain.length === 0) throw new Invalid(`no new changes: ${id.slice(0, 12)} is already the commit of snapshot ${known.snapshot_id.slice(0, 12)}`);
        break;
      }
      if (chain.length === max) throw new Invalid(`the push brings more than ${max} commits cairn does not know, the most one push for review takes (a series is one change per commit); parent ${id} is not a commit cairn knows: push fewer commits, or fetch and rebase onto ${line}`);
      const raw = await this.readCommit(id);
      const parsed = parseCommit(raw);
      if (chain.length > 0 && parsed.parent_ids.length > 1) throw new Invalid(`${id.slice(0, 12)} is a merge below the tip of the series: only the pushed tip may be a merge; push the merge alone first, then the commits above it`);
      chain.push({ id, raw, parsed });
      const parent = parsed.parent_ids[0];
      if (parent === undefined) throw new Invalid(`${id.slice(0, 12)} has no parent: a change is reviewed against ${line}; fetch and rebase onto ${line}`);
      id = parent;
    }
    let base = this.knownSnapshot(id);
    if (base === null) throw new Invalid(`parent ${id} is not a commit cairn knows: fetch and rebase onto ${line}`);
    const out: Converted[] = [];
    for (const c of chain.reverse()) {
      const sides = c.id === tipId ? await this.sideCommits(c.parsed.parent_ids.slice(1)) : [];
      const { snapshot, gitlinks } = await this.snapshotOf(c.parsed, base);
      out.push({ commit_id: c.id, raw: c.raw, parsed: c.parsed, base, snapshot, gitlinks, sides });
      base = snapshot.id;
    }
    return out;
  }

  /** The snapshot of a commit the git map holds (with its snapshot stored), or null. */
  private knownSnapshot(commitId: string): string | null {
    const rec = this.authority.store.entity<GitCommitIdRecord>(GIT_COMMIT_ID, commitId);
    return rec && this.authority.store.hasSnapshot(rec.snapshot_id) ? rec.snapshot_id : null;
  }

  /**
   * The commits reachable from a merge's other parents that the git map lacks, parents first,
   * each converted (its snapshot's parent: its first parent's snapshot; none for a root).
   * Iterative: a side history may be long (at most maxSideCommits()).
   */
  private async sideCommits(roots: string[]): Promise<PushedSide[]> {
    const out: PushedSide[] = [];
    const snapshotOf = new Map<string, string | null>();
    const limit = maxSideCommits();
    let read = 0;
    const stack: { id: string; parsed: ReturnType<typeof parseCommit> | null; raw: Buffer | null }[] = roots.map((id) => ({ id, parsed: null, raw: null }));
    while (stack.length) {
      const top = stack[stack.length - 1];
      if (snapshotOf.has(top.id)) {
        stack.pop();
        continue;
      }
      if (top.parsed === null) {
        const known = this.knownSnapshot(top.id);
        if (known !== null) {
          snapshotOf.set(top.id, known);
          stack.pop();
          continue;
        }
        if (++read > limit) throw new Invalid(`the merge brings more than ${limit} commits cairn does not know: import the merged history first (cairn import-git)`);
        top.raw = await this.readCommit(top.id);
        top.parsed = parseCommit(top.raw);
        for (const p of top.parsed.parent_ids) if (!snapshotOf.has(p)) stack.push({ id: p, parsed: null, raw: null });
        continue;
      }
      stack.pop();
      const first = top.parsed.parent_ids[0];
      const parentSnapshot = first === undefined ? null : snapshotOf.get(first) ?? null;
      const { snapshot, gitlinks } = await this.snapshotOf(top.parsed, parentSnapshot);
      snapshotOf.set(top.id, snapshot.id);
      out.push({ snapshot: { id: snapshot.id, bytes: snapshot.bytes }, commit: { commit_id: top.id, raw: top.raw!, gitlinks } });
    }
    return out;
  }

  private async readCommit(id: string): Promise<Buffer> {
    const { type, data } = await this.objects.read(id, MAX_GIT_COMMIT_BYTES);
    if (type !== 'commit') throw new Invalid(`${id} is a ${type}, not a commit`);
    return data;
  }

  /** A commit's tree converted, and its snapshot (parent: `parentSnapshot`). */
  private async snapshotOf(parsed: ReturnType<typeof parseCommit>, parentSnapshot: string | null): Promise<{ snapshot: { id: string; bytes: Buffer; root_tree_id: string }; gitlinks: Gitlink[] }> {
    const maxPaths = this.authority.store.maxSnapshotPaths;
    const walk = { paths: 0, gitlinks: [] as Gitlink[] };
    const root = await this.walk(parsed.tree_id, '', walk);
    if (pathsOf(root.size) > maxPaths) throw new Invalid(`the commit's tree holds more than ${maxPaths} paths, the most a snapshot holds`);
    // The walk checked each path it walked; a git tree met again deeper (cached) is checked here.
    await this.authority.content.requireTreeDepth(root.id, "the commit's tree", this.built.trees, this.sizes);
    const bytes = encodeSnapshot({
      root_tree_id: root.id,
      parent_snapshot_ids: parentSnapshot === null ? [] : [parentSnapshot],
      created_at_s: Math.max(0, parsed.committer.time),
      message: snapshotMessage(parsed, MAX_MESSAGE_BYTES),
    });
    walk.gitlinks.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    return { snapshot: { id: sha256Hex(bytes), bytes, root_tree_id: root.id }, gitlinks: walk.gitlinks };
  }

  private async walk(gitTree: string, prefix: string, w: { paths: number; gitlinks: Gitlink[] }): Promise<{ id: string; size: number }> {
    const store = this.authority.store;
    const maxPaths = store.maxSnapshotPaths;
    const cached = this.trees.get(gitTree);
    if (cached && !this.treeHasGitlinks.has(gitTree)) {
      w.paths += cached.size - 1;
      if (w.paths > maxPaths) throw new Invalid(`the commit's tree holds more than ${maxPaths} paths, the most a snapshot holds`);
      return cached;
    }
    const t = await this.objects.read(gitTree, MAX_TREE_BYTES);
    if (t.type !== 'tree') throw new Invalid(`${gitTree} is a ${t.type}, not a tree`);
    const entries: TreeEntry[] = [];
    const sizeOf = new Map<string, number>();
    let links = false;
    const parsedEntries = parseGitTree(t.data);
    if (parsedEntries.length) requirePathDepth(prefix + parsedEntries[0].name.toString('latin1'), "the commit's tree");
    for (const e of parsedEntries) {
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
        w.gitlinks.push({ path: where, commit_id: e.id });
        links = true;
        continue;
      }
      if (++w.paths > maxPaths) throw new Invalid(`the commit's tree holds more than ${maxPaths} paths, the most a snapshot holds`);
      if (kind === 'directory') {
        const before = w.gitlinks.length;
        const sub = await this.walk(e.id, `${where}/`, w);
        if (w.gitlinks.length > before) links = true;
        entries.push({ name, kind, id: sub.id });
        sizeOf.set(sub.id, sub.size);
        continue;
      }
      let id = this.blobIds.get(e.id);
      if (id === undefined) {
        id = await this.blob(e.id, where);
        this.blobIds.set(e.id, id);
      }
      entries.push({ name, kind, id });
    }
    const bytes = encodeTree(entries);
    const id = sha256Hex(bytes);
    const size = sizeFromEntries(entries, (x) => sizeOf.get(x) ?? 1);
    if (!store.has('tree', id)) {
      this.built.trees.set(id, bytes);
      this.sizes.set(id, size);
    }
    if (links) this.treeHasGitlinks.add(gitTree);
    this.trees.set(gitTree, { id, size });
    return { id, size };
  }

  /** A blob streamed from git into the pack (unless the store holds it); its cairn id. */
  private async blob(gitId: string, where: string): Promise<string> {
    const store = this.authority.store;
    const object = await this.objects.open(gitId);
    if (object.type !== 'blob') {
      await object.skip();
      throw new Invalid(`${where} names a ${object.type}, not a blob`);
    }
    this.pack ??= await store.streamingPack(PACK_KIND_OBJECT);
    return this.pack.add(object.size, object.body, (id) => !store.has('blob', id));
  }
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

const NO_BYTES: Buffer = Buffer.alloc(0);

/**
 * `git cat-file --batch` on the quarantine (the pushed objects and, through alternates, the
 * shadow's). Its output is read as it comes, with backpressure: an object's bytes are handed on
 * chunk by chunk (a blob of any size) or gathered once its size is known (trees, commits) —
 * never by growing a buffer chunk after chunk.
 */
class GitObjects {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly output: AsyncIterator<Buffer>;
  /** Bytes read from git and not handed on yet. */
  private rest: Buffer = NO_BYTES;
  /** An object's bytes are being handed on: nothing else may be asked meanwhile. */
  private busy = false;
  private stderr = '';

  constructor(dir: string, shadowDir: string) {
    this.proc = spawn(gitBinary(), ['cat-file', '--batch'], { env: { ...gitEnv(path.dirname(dir), []), ...borrowing(shadowDir), GIT_DIR: dir }, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    this.output = (this.proc.stdout as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    this.proc.stderr.on('data', (c: Buffer) => { if (this.stderr.length < 2048) this.stderr += c.toString('utf8'); });
    this.proc.on('error', () => undefined);
    this.proc.stdin.on('error', () => undefined);
  }

  private async chunk(): Promise<Buffer> {
    if (this.rest.length > 0) {
      const r = this.rest;
      this.rest = NO_BYTES;
      return r;
    }
    const next = await this.output.next();
    if (next.done) throw new Error(`git cat-file ended early: ${this.stderr.trim().slice(0, 200)}`);
    return next.value;
  }

  /** Ask for an object: its type and size; `body` yields exactly its bytes (read it, or `skip`, before asking again). */
  async open(id: string): Promise<{ type: string; size: number; body: AsyncIterable<Buffer>; skip: () => Promise<void> }> {
    if (this.busy) throw new Error('git cat-file: an object was left half read');
    this.proc.stdin.write(`${id}\n`);
    let line = NO_BYTES;
    for (;;) {
      const c = await this.chunk();
      const nl = c.indexOf(0x0a);
      if (nl >= 0) {
        line = line.length ? Buffer.concat([line, c.subarray(0, nl)]) : c.subarray(0, nl);
        this.rest = c.subarray(nl + 1);
        break;
      }
      line = Buffer.concat([line, c]);
      if (line.length > 1024) throw new Error('git cat-file: an object header is too long');
    }
    const header = line.toString('latin1');
    if (header.endsWith(' missing')) throw new Invalid(`object ${id} was not sent with the push`);
    const [, type, sizeText] = header.split(' ');
    const size = Number(sizeText);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`git cat-file: a header ${JSON.stringify(header.slice(0, 100))} names no size`);
    this.busy = true;
    const body = this.body(size);
    return { type, size, body, skip: async () => { for await (const _ of body) { /* dropped */ } } };
  }

  private async *body(size: number): AsyncGenerator<Buffer> {
    let left = size;
    while (left > 0) {
      const c = await this.chunk();
      if (c.length > left) {
        this.rest = c.subarray(left);
        const last = c.subarray(0, left);
        left = 0;
        yield last;
      } else {
        left -= c.length;
        yield c;
      }
    }
    // The newline git writes after each object.
    const c = await this.chunk();
    if (c[0] !== 0x0a) throw new Error('git cat-file: an object is not followed by a newline');
    this.rest = c.subarray(1);
    this.busy = false;
  }

  /** An object whole (at most `max` bytes: a tree or a commit). */
  async read(id: string, max: number): Promise<{ type: string; data: Buffer }> {
    const o = await this.open(id);
    if (o.size > max) {
      await o.skip();
      throw new Invalid(`the ${o.type} ${id} is ${o.size} bytes, more than the ${max} a pushed ${o.type} may be`);
    }
    const data = Buffer.allocUnsafe(o.size);
    let at = 0;
    for await (const c of o.body) {
      c.copy(data, at);
      at += c.length;
    }
    return { type: o.type, data };
  }

  close(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}
