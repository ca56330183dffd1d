// The git mirror runner of one open authority (docs/git.md "Mirror"): it pushes each mirrored
// line to its remote after the line moves. The service starts it after the authority opens and
// stops it before the authority closes; pushes of every repository share the slots of
// ./mirror-slots.ts (a bound over the server and one per repository, served in turn), and an
// http(s) push that moves nothing for MirrorPolicy.stallSeconds is stopped, so a slow or silent
// remote never holds more than its own repository's share.
//
// - Never in the commit path: a `line.moved` event (published after its commit) schedules the
//   line's mirrors 200 ms later; the push runs in the background, and what it found is written in
//   a small transaction of its own.
// - What is due follows from durable state alone (the mirror's record and the line's head), so a
//   restart, after kill -9 too, catches up: at start every mirror is looked at.
// - The remote is never forced: before each push the runner reads the remote's branch (git
//   ls-remote). Absent (on a first push), the last commit pushed, or an ancestor of the line's
//   commit: pushed with `--force-with-lease` on exactly that value (a concurrent push to the
//   remote fails the lease, and the next attempt looks again). Anything else: the mirror stops
//   as `diverged` and `git_mirror.diverged` is written.
// - Credentials are the operator's grants (--git-mirror-credential), checked again and read at
//   each push (a grant withdrawn or narrowed since registration sends nothing), and handed to git in its environment (GIT_CONFIG_* http.extraHeader), never on a
//   command line; they are removed from anything stored or logged.
import { execFile } from 'node:child_process';
import { promises as dns } from 'node:dns';
import { promises as fsp } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_MIRROR_BACKOFF_MS,
  NO_GRANTS,
  STRICT_MIRROR_TARGETS,
  grantRefusal,
  insideRoot,
  mirrorBackoffMs,
  scrubbed,
  type CredentialGrants,
  type GitMirrorRecord,
  type MirrorTargets,
} from '../domain/git-mirrors.js';
import { hostAllowed, isLoopbackName, refusal, targetPort } from '../domain/webhook-targets.js';
import type { Authority } from './authority.js';
import type { MirrorOutcome } from './git-mirrors.js';
import type { GitExporter } from './git-export.js';
import { localAddresses } from './local-addresses.js';
import type { Log } from './logger.js';
import type { MirrorSlots } from './mirror-slots.js';

export interface MirrorPolicy {
  /** Where mirrors may push (--git-mirror-allow, --git-mirror-file-root). */
  targets: MirrorTargets;
  /** The operator's credential grants (--git-mirror-credential), the only secrets a mirror may send. */
  credentials: CredentialGrants;
  /** The wait after the first failed push (doubles, up to 5 minutes). */
  backoffBaseMs: number;
  /** How long one git process (ls-remote, push) may run. */
  timeoutMs: number;
  /** An http(s) transfer that receives and sends nothing for this long is stopped (curl's low-speed limit). */
  stallSeconds: number;
  /** Pushes at once, server-wide. */
  concurrency: number;
  /** Pushes at once of one repository (a slot freed goes to the next repository in turn). */
  perRepository: number;
}

export const DEFAULT_MIRROR_POLICY: MirrorPolicy = {
  targets: STRICT_MIRROR_TARGETS,
  credentials: NO_GRANTS,
  backoffBaseMs: DEFAULT_MIRROR_BACKOFF_MS,
  timeoutMs: 300_000,
  stallSeconds: 60,
  concurrency: 4,
  perRepository: 2,
};

/** A moved line is pushed this long after its move (moves close together: one push). */
const MOVE_DELAY_MS = 200;
/** Every mirror is looked at this often (a wake-up missed, retirement aborted). */
const TICK_MS = 30_000;
/** The user name sent with a token when the URL names none (GitHub's; other hosts take any). */
const TOKEN_USER = 'x-access-token';

/** A push that cannot start: said in the mirror's last_error, retried with backoff. */
class MirrorProblem extends Error {}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export class GitMirrorRunner {
  private stopped = false;
  private unsubscribe: (() => void) | null = null;
  private tick: NodeJS.Timeout | null = null;
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly children = new Set<AbortController>();
  private readonly admitted: () => boolean;

  constructor(
    private readonly authority: Authority,
    private readonly exporter: () => GitExporter,
    admitted: () => boolean,
    private readonly log: Log,
    private readonly policy: MirrorPolicy,
    private readonly slots: MirrorSlots,
  ) {
    this.admitted = () => !this.stopped && admitted();
  }

  start(): void {
    const book = this.authority.mirrors;
    book.onChange = (id) => this.run(id);
    this.unsubscribe = this.authority.store.onEvents((events) => {
      const moved = new Set<string>();
      for (const e of events) if (e.type === 'line.moved' && typeof e.data.line === 'string') moved.add(e.data.line);
      if (!moved.size) return;
      for (const m of book.live()) if (moved.has(m.line)) this.later(m.mirror_id, MOVE_DELAY_MS);
    });
    this.tick = setInterval(() => this.runAll(), TICK_MS);
    this.tick.unref();
    this.runAll();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    this.authority.mirrors.onChange = () => {};
    if (this.tick) clearInterval(this.tick);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const c of this.children) c.abort();
  }

  private runAll(): void {
    for (const m of this.authority.mirrors.live()) this.run(m.mirror_id);
  }

  private later(id: string, ms: number): void {
    if (this.stopped) return;
    const t = this.timers.get(id);
    if (t) clearTimeout(t);
    const timer = setTimeout(() => { this.timers.delete(id); this.run(id); }, Math.max(0, ms));
    timer.unref();
    this.timers.set(id, timer);
  }

  /** Look at mirror `id` now (once at a time; a poke while it runs runs it again after). */
  run(id: string): void {
    if (this.stopped) return;
    if (this.running.has(id)) {
      this.again.add(id);
      return;
    }
    this.running.add(id);
    this.look(id)
      .catch((err) => {
        if (!this.stopped) this.log.error({ repository_index: this.authority.index, mirror_id: id, problem: (err as Error).message }, 'git mirror failed; looked at again shortly');
      })
      .finally(() => {
        this.running.delete(id);
        if (this.again.delete(id)) this.run(id);
      });
  }

  private async look(id: string): Promise<void> {
    const m = this.authority.mirrors.current(id);
    if (!m || !this.admitted() || m.state === 'diverged') return;
    if (m.state === 'retrying' && (m.next_attempt_at_ms ?? 0) > Date.now()) {
      this.later(id, (m.next_attempt_at_ms ?? 0) - Date.now());
      return;
    }
    const line = this.authority.store.line(m.line);
    if (!line || line.status === 'archived' || line.head_snapshot_id === null) return;
    const exporter = this.exporter();
    let head: string | null;
    let outcome: MirrorOutcome | null = null;
    try {
      head = (await exporter.syncLine(m.line)).head_commit_id;
      // The imported tags, so the push can take those the line reaches.
      await exporter.syncTags();
    } catch (err) {
      // An export that cannot be made (a sha256 history, a branch name clash) is the mirror's failure too: said, and retried.
      head = null;
      outcome = { kind: 'failed', error: scrubbed(`the line cannot be exported: ${(err as Error).message}`, []), next_attempt_at_ms: Date.now() + mirrorBackoffMs(m.failures + 1, this.policy.backoffBaseMs) };
    }
    if (outcome === null && (head === null || (m.state === 'ok' && m.last_pushed_commit_id === head))) return;
    outcome ??= await this.slots.run(this.authority.index, () => this.attempt(m, head!, exporter.root));
    if (this.stopped) return;
    const recorded = await this.authority.mirrors.recordAttempt(m, outcome, this.admitted);
    if (!recorded) return;
    const where = { repository_index: this.authority.index, mirror_id: id, line: m.line };
    if (outcome.kind === 'pushed') this.log.info({ ...where, commit_id: outcome.commit_id }, 'git mirror pushed');
    else if (outcome.kind === 'diverged') this.log.warn({ ...where, remote_commit_id: outcome.remote_commit_id, reason: outcome.reason }, 'git mirror diverged: the remote holds a commit that is not the line\'s; nothing is forced (cairn mirror resume after putting the remote right)');
    else {
      this.log.warn({ ...where, failures: recorded.failures, error: outcome.error }, 'git mirror push failed; retried with backoff');
      this.later(id, outcome.next_attempt_at_ms - Date.now());
    }
    // The line may have moved again while this push ran.
    if (outcome.kind === 'pushed' && this.authority.store.line(m.line)?.head_snapshot_id !== line.head_snapshot_id) this.again.add(id);
  }

  /** One push of `head` to the mirror's remote: what it found. Never throws. */
  private async attempt(m: GitMirrorRecord, head: string, shadow: string): Promise<MirrorOutcome> {
    let secrets: string[] = [];
    const failed = (error: string): MirrorOutcome => ({ kind: 'failed', error: scrubbed(error, secrets), next_attempt_at_ms: Date.now() + mirrorBackoffMs(m.failures + 1, this.policy.backoffBaseMs) });
    try {
      if (this.stopped) return failed('the server stopped');
      const secret = await this.credential(m.credential, m.url);
      if (secret !== null) secrets = [secret, Buffer.from(`${TOKEN_USER}:${secret}`).toString('base64')];
      const env = await this.gitEnv(m.url, shadow, secret, secrets);
      const ref = `refs/heads/${m.line}`;
      const listed = await this.git(shadow, ['ls-remote', '--refs', m.url, ref], env);
      if (listed.code !== 0) return failed(`git ls-remote failed: ${this.gitMessage(listed)}`);
      const remote = /^([0-9a-f]{40})\t/m.exec(listed.stdout)?.[1] ?? null;
      // The imported tags whose commit the line reaches go with it (git push --follow-tags, for
      // every tag): never forced, so a remote tag naming something else fails the push, said.
      const merged = await this.git(shadow, ['for-each-ref', `--merged=${head}`, '--format=%(refname)', 'refs/tags/'], env);
      if (merged.code !== 0) return failed(`git for-each-ref failed: ${this.gitMessage(merged)}`);
      const tags = merged.stdout.split('\n').filter((t) => t.startsWith('refs/tags/')).map((t) => `${t}:${t}`);
      if (remote === head) {
        if (tags.length === 0) return { kind: 'pushed', commit_id: head };
        const tagged = await this.git(shadow, ['push', '--porcelain', '--no-verify', m.url, ...tags], env);
        if (tagged.code !== 0) return failed(`git push of the tags failed: ${this.gitMessage(tagged)}`);
        return { kind: 'pushed', commit_id: head };
      }
      let lease: string;
      if (remote === null) {
        if (m.last_pushed_commit_id !== null) return { kind: 'diverged', remote_commit_id: null, reason: `the remote has no ${ref} any more (it was at ${m.last_pushed_commit_id}, pushed by this mirror): someone deleted it; nothing is pushed until the mirror is resumed` };
        lease = '';
      } else if (remote === m.last_pushed_commit_id || (await this.isAncestor(shadow, remote, head, env))) {
        lease = remote;
      } else {
        return { kind: 'diverged', remote_commit_id: remote, reason: `the remote's ${ref} is at ${remote}, which is neither the commit this mirror pushed last (${m.last_pushed_commit_id ?? 'none'}) nor one of the line's commits: someone pushed to it; nothing is forced` };
      }
      const pushed = await this.git(shadow, ['push', '--porcelain', '--no-verify', `--force-with-lease=${ref}:${lease}`, m.url, `${head}:${ref}`, ...tags], env);
      if (pushed.code !== 0) return failed(`git push failed: ${this.gitMessage(pushed)}`);
      return { kind: 'pushed', commit_id: head };
    } catch (err) {
      return failed(err instanceof MirrorProblem ? err.message : `push could not start: ${(err as Error).message}`);
    }
  }

  /**
   * The secret of the grant a mirror names, or null for none; MirrorProblem (never naming the
   * value) when the grant is not (or no longer) open to this repository and URL, or cannot be read.
   */
  private async credential(name: string | null, url: string): Promise<string | null> {
    if (name === null) return null;
    const refused = grantRefusal(this.policy.credentials, name, this.authority.index, url);
    if (refused) throw new MirrorProblem(`${refused}; nothing was sent`);
    const grant = this.policy.credentials.get(name)!;
    let value: string | undefined;
    if (grant.source.kind === 'env') {
      value = process.env[grant.source.variable];
      if (value === undefined || value.trim() === '') throw new MirrorProblem(`credential ${name}: the server's environment variable the grant names is unset or empty`);
    } else {
      try {
        value = await fsp.readFile(grant.source.path, 'utf8');
      } catch (err) {
        throw new MirrorProblem(`credential ${name}: cannot read the file the grant names (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    const secret = value.trim();
    if (secret === '' || /[\r\n\0]/.test(secret)) throw new MirrorProblem(`credential ${name}: empty, or more than one line`);
    return secret;
  }

  /**
   * git's environment for one mirror: no configuration of the machine's, no prompt, only the
   * URL's own protocol, no redirects, the credential as an Authorization header, and for a host
   * name its addresses resolved and judged here and pinned (http.curloptResolve), so git connects
   * to exactly the addresses judged.
   */
  private async gitEnv(url: string, shadow: string, secret: string | null, secrets: string[]): Promise<NodeJS.ProcessEnv> {
    const parsed = new URL(url);
    // A remote that accepts and then sends nothing (nor takes anything) is given up after
    // stallSeconds, by curl's own low-speed check, rather than holding a slot for the whole timeout.
    const config: [string, string][] = [
      ['credential.helper', ''], ['http.followRedirects', 'false'], ['core.askPass', ''],
      ['http.lowSpeedLimit', '1'], ['http.lowSpeedTime', String(this.policy.stallSeconds)],
    ];
    if (parsed.protocol === 'file:') {
      const root = this.policy.targets.fileRoot;
      const dir = fileURLToPath(parsed);
      const real = await fsp.realpath(dir).catch(() => null);
      if (root === null || real === null || !insideRoot(real, await fsp.realpath(root).catch(() => root))) throw new MirrorProblem(root === null ? 'file:// mirrors are not allowed by this server (cairn serve --git-mirror-file-root)' : 'the file:// mirror does not exist, or does not lie under --git-mirror-file-root once its links are followed');
    } else {
      const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
      const port = targetPort(parsed);
      const targets = this.policy.targets.network;
      const byHost = hostAllowed(targets, host);
      if (!byHost && isLoopbackName(host)) throw new MirrorProblem('refused by the mirror target policy: a loopback name (cairn serve --git-mirror-allow opens it)');
      const addresses = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true }).catch((err: NodeJS.ErrnoException) => { throw new MirrorProblem(`cannot resolve the remote's host (${err.code ?? 'error'})`); })).map((a) => a.address);
      const local = localAddresses();
      for (const a of addresses) {
        const r = refusal(targets, a, port, byHost, local);
        if (r) throw new MirrorProblem(r.kind === 'listener' ? 'refused by the mirror target policy: the host is this server\'s own listener' : 'refused by the mirror target policy: the host resolves to an internal address (cairn serve --git-mirror-allow opens it)');
      }
      if (!net.isIP(host)) config.push(['http.curloptResolve', `${host}:${port}:${addresses.map((a) => (a.includes(':') ? `[${a}]` : a)).join(',')}`]);
      if (secret !== null) {
        const user = parsed.username ? decodeURIComponent(parsed.username) : TOKEN_USER;
        const basic = Buffer.from(`${user}:${secret}`).toString('base64');
        secrets.push(basic);
        config.push(['http.extraHeader', `Authorization: Basic ${basic}`]);
      }
    }
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: shadow,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ALLOW_PROTOCOL: parsed.protocol.slice(0, -1),
      GIT_CONFIG_COUNT: String(config.length),
    };
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    return env;
  }

  private async isAncestor(shadow: string, older: string, newer: string, env: NodeJS.ProcessEnv): Promise<boolean> {
    const r = await this.git(shadow, ['merge-base', '--is-ancestor', older, newer], env);
    return r.code === 0;
  }

  /** Run git in the shadow repository (asynchronously, bounded by the policy's timeout; stopping kills it). */
  private git(shadow: string, args: string[], env: NodeJS.ProcessEnv): Promise<GitResult> {
    const controller = new AbortController();
    this.children.add(controller);
    return new Promise<GitResult>((resolve) => {
      execFile(process.env.CAIRN_GIT || 'git', ['--git-dir', shadow, ...args], { env, signal: controller.signal, timeout: this.policy.timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
        this.children.delete(controller);
        const e = err as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
        if (e && typeof e.code !== 'number') {
          resolve({ code: -1, stdout: String(stdout), stderr: e.killed ? `no answer within ${this.policy.timeoutMs / 1000} s` : `git could not be run (${e.code ?? e.message})` });
          return;
        }
        resolve({ code: e ? Number(e.code) : 0, stdout: String(stdout), stderr: String(stderr) });
      });
    });
  }

  /** git's own words about a failure (its error lines, or the push's report lines); a stall said plainly first. */
  private gitMessage(r: GitResult): string {
    const words = gitWords(r);
    return /Operation too slow|curl 28\b/i.test(words) ? `the remote stalled: nothing arrived for ${this.policy.stallSeconds} s (cairn serve --git-mirror-stall-seconds); ${words}` : words;
  }
}

/** git's error lines (stderr), or the push's report lines. */
function gitWords(r: GitResult): string {
  const lines = `${r.stderr}\n${r.stdout}`.split('\n').map((l) => l.trim()).filter((l) => l !== '' && l !== 'Done' && !l.startsWith('To '));
  return lines.join('; ') || `exit ${r.code}`;
}
