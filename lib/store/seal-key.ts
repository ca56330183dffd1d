// The server's seal key (storage-layout.md §17.2): DATA/seal.key, created on first use, never
// inside a repository directory (so no export, archive or copy of one carries it).
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { SEAL_KEY_BYTES, sealKeyOf, type SealKey } from '../domain/sealing.js';
import { writeFileDurableWith } from './durable.js';

const HEADER = 'cairn-seal-key-v1 ';

/** The key in `file`; created (0600, durably) when absent and `create`; null when absent and not. Throws on a damaged file. */
export async function openSealKey(file: string, create: boolean): Promise<SealKey | null> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (!create) return null;
    const bytes = randomBytes(SEAL_KEY_BYTES);
    await writeFileDurableWith(file, async (handle) => {
      await handle.chmod(0o600);
      await handle.writeFile(`${HEADER}${bytes.toString('hex')}\n`);
    });
    return sealKeyOf(bytes);
  }
  const m = /^cairn-seal-key-v1 ([0-9a-f]{64})\n?$/.exec(text);
  if (!m) throw new Error(`${file} is not a seal key (expected "${HEADER}" and 64 hex digits)`);
  return sealKeyOf(Buffer.from(m[1], 'hex'));
}
