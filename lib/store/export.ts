// Export listing of an authority (storage-layout.md §15): everything the authority owns lives
// under its directory, so the listing is the whole authority. Uncommitted uploads (staging/)
// and temp files are not part of it. Files are hashed as streams.
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { isTempName } from './durable.js';

export interface ExportFile {
  path: string;
  size: number;
  sha256: string;
}

/** Relative paths (forward slashes) of every exported file, sorted bytewise. */
export async function listAuthorityFiles(root: string): Promise<string[]> {
  const paths = await fg('**', { cwd: root, dot: true, onlyFiles: true, followSymbolicLinks: false, ignore: ['staging/**'] });
  return paths.filter((p) => !p.split('/').some(isTempName)).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** Files up to this size are read in one call; larger ones stream in 1 MiB chunks. */
const WHOLE_READ_LIMIT = 4 * 1024 * 1024;

export async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const { size: statSize } = await fsp.stat(file);
  if (statSize <= WHOLE_READ_LIMIT) {
    const bytes = await fsp.readFile(file);
    return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { size, sha256: hash.digest('hex') };
}

/** Every exported file with its size and sha256 (four files in flight at a time). */
export async function exportFiles(root: string): Promise<ExportFile[]> {
  const paths = await listAuthorityFiles(root);
  const out: ExportFile[] = new Array(paths.length);
  let next = 0;
  await Promise.all([0, 1, 2, 3].map(async () => {
    while (next < paths.length) {
      const i = next++;
      out[i] = { path: paths[i], ...(await hashFile(path.join(root, paths[i]))) };
    }
  }));
  return out;
}

/** Stream `from` to `to` (creating parents), durably; returns size and sha256 of what was copied. */
export async function copyFileHashed(from: string, to: string): Promise<{ size: number; sha256: string }> {
  await fsp.mkdir(path.dirname(to), { recursive: true });
  const hash = createHash('sha256');
  let size = 0;
  const out = await fsp.open(to, 'w', 0o644);
  try {
    for await (const chunk of createReadStream(from, { highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
      await out.write(chunk as Buffer);
    }
    await out.sync();
  } finally {
    await out.close();
  }
  return { size, sha256: hash.digest('hex') };
}
