// Working trees on the client: scan a directory into blobs and canonical trees (push), and
// write a snapshot's tree back out byte for byte (pull). Empty directories are kept: they are
// directory entries pointing at the empty tree.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { encodeTree, sha256Hex, type EntryKind, type TreeEntry } from '../domain/content.js';

export interface ScannedBlob {
  id: string;
  size: number;
  /** Absolute path of the file, or of the symlink whose target is the blob. */
  source: string;
  symlink: boolean;
}

export interface ScannedTree {
  rootTreeId: string;
  /** Canonical encodings of every tree, by id. */
  trees: Map<string, Buffer>;
  blobs: Map<string, ScannedBlob>;
  fileCount: number;
  byteCount: number;
  skipped: string[];
}

interface DirNode {
  entries: Map<string, { kind: EntryKind; id?: string; dir?: DirNode }>;
}

async function hashFile(file: string, size: number): Promise<string> {
  if (size <= 8 * 1024 * 1024) return sha256Hex(await fsp.readFile(file));
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Read a blob's bytes back for packing. */
export async function readBlobSource(blob: ScannedBlob): Promise<Buffer> {
  return blob.symlink ? fsp.readlink(blob.source, { encoding: 'buffer' }) : fsp.readFile(blob.source);
}

/** Walk `dir` (fast-glob, symlinks not followed) and compute every blob and tree id. */
export async function scanDirectory(dir: string): Promise<ScannedTree> {
  const root: DirNode = { entries: new Map() };
  const blobs = new Map<string, ScannedBlob>();
  const skipped: string[] = [];
  let fileCount = 0;
  let byteCount = 0;
  const nodeFor = (rel: string): DirNode => {
    let node = root;
    if (rel === '') return node;
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
  const paths = await fg('**', { cwd: dir, dot: true, onlyFiles: false, followSymbolicLinks: false, unique: true });
  paths.sort();
  const visit = async (rel: string): Promise<void> => {
    const abs = path.join(dir, rel);
    {
      const st = await fsp.lstat(abs);
      const parent = nodeFor(path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel));
      const name = path.posix.basename(rel);
      if (st.isDirectory()) {
        nodeFor(rel);
        return;
      }
      let kind: EntryKind;
      let id: string;
      let size: number;
      if (st.isSymbolicLink()) {
        const target = await fsp.readlink(abs, { encoding: 'buffer' });
        kind = 'symlink';
        id = sha256Hex(target);
        size = target.length;
        if (!blobs.has(id)) blobs.set(id, { id, size, source: abs, symlink: true });
      } else if (st.isFile()) {
        kind = st.mode & 0o111 ? 'executable' : 'file';
        size = st.size;
        id = await hashFile(abs, size);
        if (!blobs.has(id)) blobs.set(id, { id, size, source: abs, symlink: false });
      } else {
        skipped.push(rel);
        return;
      }
      fileCount++;
      byteCount += size;
      parent.entries.set(name, { kind, id });
    }
  };
  // A few files in flight at once: enough to overlap I/O, bounded in memory.
  let next = 0;
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < paths.length) await visit(paths[next++]);
  }));

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
  return { rootTreeId, trees, blobs, fileCount, byteCount, skipped };
}

export interface Materializer {
  readTree(id: string): Promise<TreeEntry[]>;
  readBlob(id: string): Promise<Buffer>;
}

/** Write the tree `treeId` into `dir` (which must be empty or absent): files, modes, symlinks. */
export async function materialize(source: Materializer, treeId: string, dir: string): Promise<{ files: number; bytes: number }> {
  await fsp.mkdir(dir, { recursive: true });
  if ((await fsp.readdir(dir)).length > 0) throw new Error(`output directory ${dir} is not empty`);
  let files = 0;
  let bytes = 0;
  const write = async (id: string, into: string): Promise<void> => {
    for (const entry of await source.readTree(id)) {
      const target = path.join(into, entry.name);
      if (entry.kind === 'directory') {
        await fsp.mkdir(target);
        await write(entry.id, target);
        continue;
      }
      const content = await source.readBlob(entry.id);
      if (entry.kind === 'symlink') {
        await fsp.symlink(content, target);
      } else {
        await fsp.writeFile(target, content, { mode: entry.kind === 'executable' ? 0o755 : 0o644 });
        await fsp.chmod(target, entry.kind === 'executable' ? 0o755 : 0o644);
      }
      files++;
      bytes += content.length;
    }
  };
  await write(treeId, dir);
  return { files, bytes };
}
