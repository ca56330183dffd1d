// DATA/archive.json (storage-layout.md §20.3): the archive a data directory ships to and the
// generation it claimed there. Written by the writer's claim, a restore ("0": not claimed yet)
// and a promotion; read by `serve --archive` at start.
import { promises as fsp } from 'node:fs';
import { writeFileDurable } from '../store/durable.js';

export interface ArchiveFile {
  url: string;
  /** Decimal; "0": restored, not claimed yet. */
  generation: string;
}

export async function readArchiveFile(file: string): Promise<ArchiveFile | null> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<ArchiveFile>;
  if (typeof parsed.url !== 'string' || typeof parsed.generation !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(parsed.generation)) {
    throw new Error(`${file} is not an archive file ({"url": "s3://…", "generation": "N"})`);
  }
  return { url: parsed.url, generation: parsed.generation };
}

export async function writeArchiveFile(file: string, value: ArchiveFile): Promise<void> {
  await writeFileDurable(file, `${JSON.stringify(value)}\n`);
}
