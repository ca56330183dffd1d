// Working trees on the client: scan a directory into blobs and canonical trees (push), and
// write a snapshot's tree back out byte for byte (pull). Empty directories are kept: they are
// directory entries pointing at the empty tree.
//
// Both directions use synchronous file calls in short bursts: for thousands of small files a
// readFileSync/writeFileSync costs a fraction of the four thread-pool hops of the async calls.
// The loops yield to the event loop regularly so uploads and downloads keep streaming.
import { createHash } from 'node:crypto';
import { closeSync, lstatSync, mkdirSync, openSync, readSync, readdirSync, readFileSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { encodeTree, sha256Hex, type EntryKind, type TreeEntry } from '../domain/content.js';
import { ALWAYS_PRUNED, loadIgnoreRules, type IgnoreTest } from './ignore-rules.js';

export interface ScannedTree {
  rootTreeId: string;
  /** Canonical encodings of every tree, by id. */
  trees: Map<string, Buffer>;
  /** Every distinct blob id in the tree. */
  blobs: Set<string>;
  fileCount: number;
  byteCount: number;
  /** Paths left out because they are neither file, directory nor symlink (FIFOs, sockets, devices). */
  skipped: string[];
  /** Every file and symlink by path: its kind and blob id. */
  entries: Map<string, { kind: EntryKind; id: string }>;
  /** Every directory path (not the root). */
  directories: string[];
}

export interface ScanOptions {
  /** Leave out paths this test matches; default: the rules of `dir` (.cairnignore, .cairn/, .git/). */
  ignore?: IgnoreTest;
  /** Told the total size of the files once they are listed (for a progress bar). */
  onTotal?: (bytes: number) => void;
  /** Told of each file read: its size, blob id, and whether the blob was seen first here. */
  onFile?: (size: number, id: string, first: boolean) => void;
  /**
   * Where to read the next file, if the caller has a place for it (its pack slab: a new blob's
   * bytes then need no copy). Files that do not fit are read into the scan's own buffer.
   */
  readTarget?: () => Buffer | null;
  /** The tree's paths from `listTree(dir)`, when the caller listed it already. */
  listed?: string[];
}

interface DirNode {
  entries: Map<string, { kind: EntryKind; id?: string; dir?: DirNode }>;
}

/** Files larger than this are read and hashed in chunks; `onBlob` then gets a reader instead. */
const WHOLE_FILE_LIMIT = 256 * 1024 * 1024;
/** Yield to the event loop after this many bytes of synchronous work. */
const YIELD_EVERY = 8 * 1024 * 1024;

function hashLargeFile(file: string): string {
  const hash = createHash('sha256');
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

// Files are read into one reused buffer: a fresh buffer per file costs a page fault per 4 KiB
// and garbage to collect (on the benchmark tree, most of the scan's time went there).
let readScratch = Buffer.allocUnsafe(1024 * 1024);

/**
 * A file's bytes as a view of `into` (when it has room for one byte more than `size`) or of the
 * scratch buffer, valid until the next call.
 */
function readWhole(file: string, size: number, into: Buffer | null): Buffer {
  let target = into;
  if (!target || target.length < size + 1) {
    if (readScratch.length < size + 1) readScratch = Buffer.allocUnsafe(Math.max(size + 1, readScratch.length * 2));
    target = readScratch;
  }
  const fd = openSync(file, 'r');
  try {
    let done = 0;
    for (;;) {
      // One byte more than lstat said: a file that grew since is read whole instead.
      const n = readSync(fd, target, done, size + 1 - done, null);
      if (n === 0) return target.subarray(0, done);
      done += n;
      if (done > size) return readFileSync(file);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Every path below `dir` (fast-glob, symlinks not followed, the always-pruned directories left
 * out), sorted: the walk order of `scanDirectory`. fast-glob is loaded on first use, not at
 * start-up (a pull never walks a directory), and its synchronous walk is used: for thousands of
 * small directories it takes half the time of the asynchronous one (no thread-pool hop per
 * readdir). A push lists the tree while its first requests are in flight.
 */
export async function listTree(dir: string): Promise<string[]> {
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    throw new Error(`${dir} does not exist`);
  }
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  const { default: fg } = await import('fast-glob');
  return fg.sync('**', { cwd: dir, dot: true, onlyFiles: false, followSymbolicLinks: false, unique: true, ignore: ALWAYS_PRUNED }).sort();
}

/**
 * Walk `dir` (fast-glob lists it, symlinks not followed), hash every file and build every tree.
 * `onBlob(id, bytes)` is called once per distinct blob with its content, in walk order, so the
 * caller can pack what the server lacks in the same pass (each file is read once). The buffer
 * `bytes()` returns is valid only until `onBlob` settles: copy what is kept.
 */
export async function scanDirectory(dir: string, onBlob: (id: string, bytes: () => Buffer) => Promise<void> | void = () => {}, options: ScanOptions = {}): Promise<ScannedTree> {
  const paths = options.listed ?? (await listTree(dir));
  const root: DirNode = { entries: new Map() };
  const blobs = new Set<string>();
  const skipped: string[] = [];
  const entries = new Map<string, { kind: EntryKind; id: string }>();
  const directories: string[] = [];
  const ignored = options.ignore ?? loadIgnoreRules(dir);
  const ignoredDirs: string[] = [];
  let fileCount = 0;
  let byteCount = 0;
  const nodeFor = (rel: string): DirNode => {
    let node = root;
    if (rel === '' || rel === '.') return node;
    for (const part of rel.split('/')) {
      let child = node.entries.get(part);
      if (!child) {
        child = { kind: 'directory', dir: { entries: new Map() } };
        node.entries.set(part, child);
      }
      node = child.dir!;
    }
    return node;
  };
  // One lstat per path: the total for the progress bar and the walk share it.
  const stats = new Map<string, Stats | null>();
  if (options.onTotal) {
    let total = 0;
    for (const rel of paths) {
      let s: Stats | null = null;
      try {
        s = lstatSync(path.join(dir, rel));
        if (s.isFile()) total += s.size;
      } catch { /* vanished: the walk below reports it */ }
      stats.set(rel, s);
    }
    options.onTotal(total);
  }
  let sinceYield = 0;
  for (const rel of paths) {
    // Below an ignored directory: not even stat'ed (it may vanish meanwhile without harm).
    if (ignoredDirs.length && ignoredDirs.some((d) => rel.startsWith(d))) continue;
    const abs = path.join(dir, rel);
    const st = stats.get(rel) ?? lstatSync(abs);
    if (st.isDirectory()) {
      if (ignored(rel, true)) {
        ignoredDirs.push(`${rel}/`);
        continue;
      }
      nodeFor(rel);
      directories.push(rel);
      continue;
    }
    if (ignored(rel, false)) continue;
    let kind: EntryKind;
    let id: string;
    let size: number;
    let read: () => Buffer;
    if (st.isSymbolicLink()) {
      const target = readlinkSync(abs, { encoding: 'buffer' });
      kind = 'symlink';
      id = sha256Hex(target);
      size = target.length;
      read = () => target;
    } else if (st.isFile()) {
      kind = st.mode & 0o111 ? 'executable' : 'file';
      size = st.size;
      if (size <= WHOLE_FILE_LIMIT) {
        const bytes = readWhole(abs, size, options.readTarget?.() ?? null);
        id = sha256Hex(bytes);
        read = () => bytes;
      } else {
        id = hashLargeFile(abs);
        read = () => readFileSync(abs);
      }
    } else {
      skipped.push(rel);
      continue;
    }
    const first = !blobs.has(id);
    if (first) {
      blobs.add(id);
      await onBlob(id, read);
    }
    options.onFile?.(size, id, first);
    fileCount++;
    byteCount += size;
    entries.set(rel, { kind, id });
    nodeFor(path.posix.dirname(rel)).entries.set(path.posix.basename(rel), { kind, id });
    sinceYield += size + 4096;
    if (sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await yieldToLoop();
    }
  }

  const trees = new Map<string, Buffer>();
  const build = (node: DirNode): string => {
    const entries: TreeEntry[] = [];
    for (const [name, child] of node.entries) {
      entries.push({ name, kind: child.kind, id: child.kind === 'directory' ? build(child.dir!) : child.id! });
    }
    const encoded = encodeTree(entries);
    const id = sha256Hex(encoded);
    trees.set(id, encoded);
    return id;
  };
  const rootTreeId = build(root);
  return { rootTreeId, trees, blobs, fileCount, byteCount, skipped, entries, directories };
}

/** Create `dir` (which must be empty or absent) and every directory below it; returns `dir`. */
export function prepareOutput(dir: string, dirs: string[]): string {
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0) throw new Error(`output directory ${dir} is not empty`);
  for (const d of dirs) mkdirSync(path.join(dir, ...d.split('/')));
  return dir;
}

export { writeEntry } from './write-entry.js';
