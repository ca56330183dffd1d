// Git commits kept with the snapshots an import wrote (docs/git.md; storage-layout.md §17, type
// `git_commit`). The raw commit object is the one source of truth: its id is recomputed from the
// bytes, and every field a reader sees (tree, parents, author, committer, message) is parsed
// from them on read, never stored beside them. Pure functions; the git binary is the client's.
import { createHash } from 'node:crypto';
import { Invalid } from './errors.js';

/** The workflow.log entity type of a snapshot's git commit (id: the snapshot id). */
export const GIT_COMMIT = 'git_commit';
/**
 * The index from a git commit id to its snapshot (id: the commit id; body {commit_id,
 * snapshot_id}), written in the same record as the `git_commit` it points at, as
 * `history_promotion_key` indexes promotions: a lookup by commit id without reading every record.
 */
export const GIT_COMMIT_ID = 'git_commit_id';

export interface GitCommitIdRecord {
  commit_id: string;
  snapshot_id: string;
}

/**
 * The workflow.log entity type of a git tag an import brought (id: the tag's name, the part
 * after refs/tags/; storage-layout.md §17): read-only — recorded once, never moved or removed
 * by the API. docs/git.md "Import every branch and tag".
 */
export const GIT_TAG = 'git_tag';

export interface GitTagRecord {
  name: string;
  /** The commit the tag names (an annotated tag: the commit its object names), as imported. */
  commit_id: string;
  /** That commit's snapshot. */
  snapshot_id: string;
  /** An annotated tag: its object's id; a lightweight tag: null. */
  tag_id: string | null;
  /** An annotated tag: its object's bytes, base64 (`git cat-file tag <tag_id>`); a lightweight tag: null. */
  raw: string | null;
  recorded_at_s: number;
}

/** Tags in one request of `POST {repo}/git/tags`. */
export const MAX_GIT_TAGS = 10_000;

/**
 * A tag row as a client sends it, checked: the name git would take under refs/tags/, a
 * lowercase commit id, and for an annotated tag its object, which must name that commit
 * (`object <commit_id>` and `type commit`). Resolves to the annotated tag's id, or null.
 */
export function checkGitTagRow(row: { name: string; commit_id: string; raw?: string | null }): string | null {
  if (row.name === '' || row.name.length > 1024) throw new Invalid('a tag name must be 1 to 1024 characters');
  const problem = gitRefProblem(row.name);
  if (problem) throw new Invalid(`tag ${JSON.stringify(row.name.slice(0, 100))} is not a git tag name: ${problem}`);
  if (!isGitId(row.commit_id)) throw new Invalid(`tag ${row.name}: commit_id must be a lowercase git object id`);
  if (row.raw === undefined || row.raw === null) return null;
  const raw = Buffer.from(row.raw, 'base64');
  if (raw.length === 0 || raw.length > MAX_GIT_COMMIT_BYTES || raw.toString('base64') !== row.raw) throw new Invalid(`tag ${row.name}: raw must be the tag object's bytes in base64, at most ${MAX_GIT_COMMIT_BYTES} bytes`);
  const head = raw.toString('latin1', 0, Math.min(raw.length, 200));
  if (!head.startsWith(`object ${row.commit_id}\ntype commit\ntag `)) throw new Invalid(`tag ${row.name}: its object must name commit ${row.commit_id} (object ${row.commit_id}, type commit)`);
  return createHash(row.commit_id.length === 64 ? 'sha256' : 'sha1').update(`tag ${raw.length}\0`).update(raw).digest('hex');
}

/** A raw commit object larger than this is refused (git itself has no limit; messages this size are not commit messages). */
export const MAX_GIT_COMMIT_BYTES = 1024 * 1024;
/** Submodule entries (gitlinks) recorded with one commit. */
export const MAX_GITLINKS = 10_000;
/** Git commit rows in one import request. */
export const MAX_GIT_ROWS = 10_000;

/** imported: by an import from git; exported: built by an export; pushed: received by a push for review. */
export type GitOrigin = 'imported' | 'exported' | 'pushed';

/** A gitlink (mode 160000 tree entry): a submodule's commit at a path. A cairn tree cannot hold one, so it is kept here. */
export interface Gitlink {
  path: string;
  commit_id: string;
}

/** The `git_commit` entity body. */
export interface GitCommitRecord {
  snapshot_id: string;
  commit_id: string;
  origin: GitOrigin;
  /** The commit object's bytes (what `git cat-file commit ID` prints), base64. */
  raw: string;
  gitlinks: Gitlink[];
  /**
   * Only on an imported record whose commit the export could not keep as it was (docs/git.md,
   * "Export"): the commit the export wrote for this snapshot instead, raw bytes base64.
   */
  export?: { commit_id: string; raw: string };
  /** Only on a `pushed` record: the change whose patchset this commit became. */
  change_id?: string;
  /** Only on a `pushed` record whose push named an identity: who pushed it (the commit's author and committer are the pusher's to write). */
  pushed_by?: string;
}

/** The commit an export writes (or wrote) for a snapshot with this record: `export`, else the record's own. */
/**
 * The fetchable ref of a patchset, in Gerrit's layout (docs/git.md "Fetch a patchset"):
 * `refs/changes/<nn>/<change>/<ps>`, nn the change number's last two digits (07 for change 7).
 */
export function patchsetRefName(changeSequence: number, patchsetNumber: number): string {
  return `refs/changes/${String(changeSequence % 100).padStart(2, '0')}/${changeSequence}/${patchsetNumber}`;
}

export function exportedCommitId(r: GitCommitRecord): string {
  return r.export?.commit_id ?? r.commit_id;
}

export interface GitIdent {
  name: string;
  email: string;
  /** Seconds since the epoch, as git wrote it. */
  time: number;
  /** The offset as git wrote it: `+0100`, `-0830`. */
  tz: string;
}

export interface ParsedCommit {
  tree_id: string;
  parent_ids: string[];
  author: GitIdent;
  committer: GitIdent;
  /** The `encoding` header, or null (UTF-8). */
  encoding: string | null;
  /** The message bytes: everything after the first blank line. */
  message: Buffer;
}

const HEX_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function isGitId(value: unknown): value is string {
  return typeof value === 'string' && HEX_ID.test(value);
}

/** A git object's id: sha1 (40 hex) or sha256 (64 hex) of `<type> <size>\0<bytes>`. */
export function gitObjectId(type: string, bytes: Uint8Array, algorithm: 'sha1' | 'sha256'): string {
  return createHash(algorithm).update(`${type} ${bytes.length}\0`).update(bytes).digest('hex');
}

/** `Name <email> 1700000000 +0100` → its parts; null when it is not an ident line. */
export function parseIdent(line: string): GitIdent | null {
  const m = /^(.*?) ?<([^<>]*)> (-?\d+) ([+-]\d{4})$/.exec(line);
  if (!m) return null;
  return { name: m[1], email: m[2], time: Number(m[3]), tz: m[4] };
}

/**
 * Parse a commit object. Headers up to the first empty line (continuation lines, which begin
 * with a space, belong to the header before them: gpgsig, mergetag); the message is the rest.
 * Throws Invalid when the object is not a commit git would write.
 */
export function parseCommit(raw: Buffer): ParsedCommit {
  let end = raw.indexOf('\n\n');
  const headerText = (end < 0 ? raw : raw.subarray(0, end)).toString('utf8');
  const message = end < 0 ? Buffer.alloc(0) : raw.subarray(end + 2);
  if (end < 0) end = raw.length;
  let tree: string | null = null;
  const parents: string[] = [];
  let author: GitIdent | null = null;
  let committer: GitIdent | null = null;
  let encoding: string | null = null;
  for (const line of headerText.split('\n')) {
    if (line.startsWith(' ')) continue; // a continuation of the header before it
    const sp = line.indexOf(' ');
    const key = sp < 0 ? line : line.slice(0, sp);
    const value = sp < 0 ? '' : line.slice(sp + 1);
    if (key === 'tree') {
      if (tree !== null || !HEX_ID.test(value)) throw new Invalid('a git commit must have exactly one tree header with an object id');
      tree = value;
    } else if (key === 'parent') {
      if (!HEX_ID.test(value)) throw new Invalid(`git commit parent ${JSON.stringify(value.slice(0, 80))} is not an object id`);
      parents.push(value);
    } else if (key === 'author' || key === 'committer') {
      const ident = parseIdent(value);
      if (!ident) throw new Invalid(`git commit ${key} line ${JSON.stringify(value.slice(0, 120))} is not "name <email> time zone"`);
      if (key === 'author') author = ident;
      else committer = ident;
    } else if (key === 'encoding') {
      encoding = value;
    }
  }
  if (tree === null) throw new Invalid('a git commit must have a tree header');
  if (!author || !committer) throw new Invalid('a git commit must have author and committer headers');
  return { tree_id: tree, parent_ids: parents, author, committer, encoding, message };
}

/**
 * The message as text: UTF-8 when it is valid UTF-8 or says it is; otherwise decoded with its
 * `encoding` header when the runtime knows it, else as Latin-1 (every byte a character). The
 * raw bytes stay in the record; this is what a snapshot's message and a listing show.
 */
export function messageText(c: ParsedCommit): string {
  const enc = (c.encoding ?? 'utf-8').toLowerCase();
  if (enc === 'utf-8' || enc === 'utf8') {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(c.message);
    } catch {
      return c.message.toString('latin1');
    }
  }
  try {
    return new TextDecoder(enc).decode(c.message);
  } catch {
    return c.message.toString('latin1');
  }
}

/** What a snapshot written for this commit holds as its message: the text, cut to the snapshot format's limit. */
export function snapshotMessage(c: ParsedCommit, maxBytes: number): string {
  let text = messageText(c);
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const bytes = Buffer.from(text).subarray(0, maxBytes);
  text = new TextDecoder('utf-8').decode(bytes);
  // A cut inside a character decodes to U+FFFD, which is 3 bytes: drop it so the limit holds.
  while (Buffer.byteLength(text) > maxBytes || text.endsWith('\uFFFD')) text = text.slice(0, -1);
  return text;
}

/** A tree entry mode from git → what a cairn tree holds, or `gitlink` / `directory`. */
export function gitModeKind(mode: string): 'file' | 'executable' | 'symlink' | 'gitlink' | 'directory' {
  if (mode === '120000') return 'symlink';
  if (mode === '160000') return 'gitlink';
  if (mode === '040000' || mode === '40000') return 'directory';
  // 100644, 100755 and the old 100664 git still reads: the owner's execute bit decides.
  if (/^100[0-7]{3}$/.test(mode)) return (Number.parseInt(mode.slice(3, 4), 8) & 1) === 1 ? 'executable' : 'file';
  throw new Invalid(`git tree entry mode ${mode} is not a file, symlink, directory or submodule`);
}

/** Check one row of an import request: the id is the hash of the bytes, the bytes a commit. */
export function checkGitCommitRow(row: { snapshot_id: string; commit_id: string; raw: string; gitlinks?: Gitlink[] | null }): { raw: Buffer; parsed: ParsedCommit; gitlinks: Gitlink[] } {
  if (!isGitId(row.commit_id)) throw new Invalid(`git commit id ${JSON.stringify(String(row.commit_id).slice(0, 80))} is not 40 (sha1) or 64 (sha256) lowercase hex characters`);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(row.raw) || row.raw.length % 4 !== 0) throw new Invalid(`git commit ${row.commit_id}: raw must be base64`);
  const raw = Buffer.from(row.raw, 'base64');
  if (raw.length > MAX_GIT_COMMIT_BYTES) throw new Invalid(`git commit ${row.commit_id} is ${raw.length} bytes, more than ${MAX_GIT_COMMIT_BYTES}`);
  const algorithm = row.commit_id.length === 40 ? 'sha1' : 'sha256';
  const actual = gitObjectId('commit', raw, algorithm);
  if (actual !== row.commit_id) throw new Invalid(`git commit ${row.commit_id}: its bytes hash to ${actual}`);
  const parsed = parseCommit(raw);
  for (const id of [parsed.tree_id, ...parsed.parent_ids]) {
    if (id.length !== row.commit_id.length) throw new Invalid(`git commit ${row.commit_id} mixes object formats (sha1 and sha256 ids)`);
  }
  const gitlinks = row.gitlinks ?? [];
  if (gitlinks.length > MAX_GITLINKS) throw new Invalid(`git commit ${row.commit_id} records ${gitlinks.length} submodules, more than ${MAX_GITLINKS}`);
  const seen = new Set<string>();
  for (const g of gitlinks) {
    if (typeof g.path !== 'string' || g.path === '' || g.path.startsWith('/') || g.path.split('/').some((s) => s === '' || s === '.' || s === '..') || g.path.includes('\0')) {
      throw new Invalid(`git commit ${row.commit_id}: submodule path ${JSON.stringify(String(g.path).slice(0, 120))} is not a relative path`);
    }
    if (!isGitId(g.commit_id)) throw new Invalid(`git commit ${row.commit_id}: submodule ${g.path} commit id is not an object id`);
    if (seen.has(g.path)) throw new Invalid(`git commit ${row.commit_id}: submodule ${g.path} is listed twice`);
    seen.add(g.path);
  }
  return { raw, parsed, gitlinks: [...gitlinks].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))).map((g) => ({ path: g.path, commit_id: g.commit_id })) };
}

/** The read projection of a record: the stored fields and what the raw bytes say. */
export function gitCommitProjection(r: GitCommitRecord): Record<string, unknown> {
  const raw = Buffer.from(r.raw, 'base64');
  const c = parseCommit(raw);
  return {
    snapshot_id: r.snapshot_id,
    commit_id: r.commit_id,
    origin: r.origin,
    tree_id: c.tree_id,
    parent_ids: c.parent_ids,
    author: c.author,
    committer: c.committer,
    encoding: c.encoding,
    message: messageText(c),
    gitlinks: r.gitlinks,
    raw: r.raw,
    export_commit_id: r.export?.commit_id ?? null,
    change_id: r.change_id ?? null,
    pushed_by: r.pushed_by ?? null,
  };
}

// ------------------------------------------------------------------ export (docs/git.md "Export")

/** The fixed identity of commits cairn writes itself (committer of every built commit). */
export const CAIRN_IDENT = { name: 'cairn', email: 'cairn@cairn.invalid' } as const;

/**
 * A git identity from a cairn author name: the characters git's ident parser refuses (`<`, `>`,
 * newlines, NUL) dropped, surrounding spaces trimmed; the name itself as the email when it looks
 * like one, else `<name>@cairn.invalid` with spaces as `-`. Empty or absent → the cairn identity.
 */
export function authorIdent(author: string | null | undefined): { name: string; email: string } {
  // eslint-disable-next-line no-control-regex
  const clean = (author ?? '').replace(/[<>\u0000-\u001f\u007f]/g, '').trim();
  if (clean === '') return { ...CAIRN_IDENT };
  if (/^[^\s@]+@[^\s@]+$/.test(clean)) return { name: clean, email: clean };
  return { name: clean, email: `${clean.replace(/\s+/g, '-')}@cairn.invalid` };
}

/**
 * A commit object's bytes. Idents are given either as parts (written `name <email> time +0000`)
 * or as the exact bytes of an ident line's value (kept from an imported commit).
 */
export function encodeCommit(c: {
  tree_id: string;
  parent_ids: readonly string[];
  author: { name: string; email: string; time: number } | Buffer;
  committer: { name: string; email: string; time: number } | Buffer;
  encoding?: string | null;
  message: Buffer;
}): Buffer {
  const ident = (i: { name: string; email: string; time: number } | Buffer) => (Buffer.isBuffer(i) ? i : Buffer.from(`${i.name} <${i.email}> ${i.time} +0000`, 'utf8'));
  const head = [`tree ${c.tree_id}\n`, ...c.parent_ids.map((p) => `parent ${p}\n`)].join('');
  return Buffer.concat([
    Buffer.from(head, 'utf8'),
    Buffer.from('author '), ident(c.author), Buffer.from('\n'),
    Buffer.from('committer '), ident(c.committer), Buffer.from('\n'),
    Buffer.from(c.encoding ? `encoding ${c.encoding}\n` : ''),
    Buffer.from('\n'),
    c.message,
  ]);
}

/** A message with trailer lines added as its last paragraph (a blank line before them unless the message is empty). */
export function withTrailers(message: Buffer, trailers: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  if (message.length > 0) {
    parts.push(message);
    if (message[message.length - 1] !== 0x0a) parts.push(Buffer.from('\n'));
    parts.push(Buffer.from('\n'));
  }
  parts.push(Buffer.from(trailers.map((t) => `${t}\n`).join(''), 'utf8'));
  return Buffer.concat(parts);
}

/** The exact bytes of a header's value in a raw commit (`author`, `committer`), or null. */
export function rawHeader(raw: Buffer, key: string): Buffer | null {
  let end = raw.indexOf('\n\n');
  if (end < 0) end = raw.length;
  let at = 0;
  while (at < end) {
    let nl = raw.indexOf(0x0a, at);
    if (nl < 0 || nl > end) nl = end;
    const line = raw.subarray(at, nl);
    if (line.length > key.length && line.subarray(0, key.length + 1).toString('latin1') === `${key} `) return line.subarray(key.length + 1);
    at = nl + 1;
  }
  return null;
}

/**
 * Whether a line name can be a git branch (`refs/heads/<line>`): git's check-ref-format rules.
 * A line named otherwise is not exported.
 */
export function gitRefProblem(line: string): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(line)) return 'it holds a space, a control character or one of ~ ^ : ? * [ \\';
  if (line.includes('..') || line.includes('@{') || line === '@') return 'it holds "..", "@{" or is "@"';
  if (line.startsWith('/') || line.endsWith('/') || line.includes('//')) return 'it has an empty path component';
  if (line.endsWith('.')) return 'it ends with "."';
  for (const part of line.split('/')) {
    if (part.startsWith('.')) return 'a component starts with "."';
    if (part.endsWith('.lock')) return 'a component ends with ".lock"';
  }
  return null;
}
