// DATA/id-floors.json (storage-layout.md §20.8): per repository and id space, the highest
// sequence an earlier writer may have handed out (serve --lease reads them from etcd at a
// takeover). New ids start above them, so a restart keeps the floors a takeover set.
import { promises as fsp } from 'node:fs';
import { Corrupt } from '../domain/errors.js';
import { writeFileDurable } from './durable.js';

export type IdFloors = Map<number, Record<string, number>>;

export async function readIdFloors(file: string): Promise<IdFloors> {
  const out: IdFloors = new Map();
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  const bad = (): Error => new Corrupt(`${file} is not an id floors file ({"floors": {"REPO": {"task": N, …}}}, storage-layout.md §20.8)`);
  let parsed: { floors?: unknown };
  try {
    parsed = JSON.parse(text) as { floors?: unknown };
  } catch {
    throw bad();
  }
  if (typeof parsed?.floors !== 'object' || parsed.floors === null) throw bad();
  for (const [index, spaces] of Object.entries(parsed.floors as Record<string, unknown>)) {
    if (!/^[0-9]+$/.test(index) || typeof spaces !== 'object' || spaces === null) throw bad();
    const mine: Record<string, number> = {};
    for (const [space, n] of Object.entries(spaces as Record<string, unknown>)) {
      if (!/^[a-z_]+$/.test(space) || !Number.isSafeInteger(n) || (n as number) < 0) throw bad();
      mine[space] = n as number;
    }
    out.set(Number(index), mine);
  }
  return out;
}

export async function writeIdFloors(file: string, floors: IdFloors): Promise<void> {
  const out: Record<string, Record<string, number>> = {};
  for (const [index, spaces] of [...floors].sort((a, b) => a[0] - b[0])) out[String(index)] = spaces;
  await writeFileDurable(file, `${JSON.stringify({ floors: out })}\n`);
}
