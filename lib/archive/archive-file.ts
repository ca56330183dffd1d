// DATA/archive.json (storage-layout.md §20.3): the archive a data directory ships to (its
// canonical URL and the archive id stored in it), the generation it claimed there, and whether
// a newer writer fenced it. Written by the writer's claim and its fence, a restore ("0": not
// claimed yet), a promotion and `cairn archive reclaim`; read by `serve --archive` at start.
import { promises as fsp } from 'node:fs';
import { writeFileDurable } from '../store/durable.js';

export interface ArchiveFence {
  /** The generation that fenced this directory's (decimal; its own when the lease was taken). */
  by: string;
  at: string;
  why: string;
}

/** POST /archive/handover's request (lib/authority/archiving.ts). */
export interface HandoverRequest {
  /** The next writer's address, named in every refusal from now on (null: not given). */
  successor: string | null;
  /** How long the handover may wait for writes under way and for the shipping, in all. */
  timeoutMs: number;
}

/** What a handover shipped: per repository the last commit acknowledged and the manifest covering it. */
export interface HandoverResult {
  url: string;
  archive_id: string;
  generation: string;
  successor: string | null;
  handed_over_at: string;
  repositories: { repository: number; commit: string; manifest: string }[];
  /** The length of DATA/access.log shipped (accounts, tokens, grants), or null when there is none. */
  access_log_length: number | null;
}

/** What a switchover's promotion must reach before it claims (the old writer's HandoverResult). */
export interface TakeoverExpectation {
  archive_id: string;
  repositories: { repository: number; commit: string }[];
  access_log_length: number | null;
}

export interface ArchiveFile {
  url: string;
  /** Decimal; "0": restored or reclaimed, not claimed yet. */
  generation: string;
  /** The archive's id (its `archive-id` object), when known: what identifies the archive whatever its URL's spelling. */
  archive_id?: string;
  /** Set once a newer writer fenced this directory: it claims nothing until `cairn archive reclaim`. */
  fenced?: ArchiveFence;
  /** Set by `cairn archive reclaim`: the next claim's reason is "reclaim". */
  reclaimed_at?: string;
  /** Set once this writer handed the archive over (POST /archive/handover): it stays read-only until `cairn archive reclaim`. */
  handed_over?: HandoverResult;
}

const GENERATION = /^(0|[1-9][0-9]{0,19})$/;
export const ARCHIVE_ID = /^[0-9a-f]{32}$/;

export async function readArchiveFile(file: string): Promise<ArchiveFile | null> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const bad = (): Error => new Error(`${file} is not an archive file ({"url": "s3://…", "generation": "N", …}, storage-layout.md §20.3)`);
  let parsed: Partial<ArchiveFile>;
  try {
    parsed = JSON.parse(text) as Partial<ArchiveFile>;
  } catch {
    throw bad();
  }
  if (typeof parsed !== 'object' || parsed === null || typeof parsed.url !== 'string' || typeof parsed.generation !== 'string' || !GENERATION.test(parsed.generation)) throw bad();
  const out: ArchiveFile = { url: parsed.url, generation: parsed.generation };
  if (parsed.archive_id !== undefined) {
    if (typeof parsed.archive_id !== 'string' || !ARCHIVE_ID.test(parsed.archive_id)) throw bad();
    out.archive_id = parsed.archive_id;
  }
  if (parsed.fenced !== undefined) {
    const f = parsed.fenced as Partial<ArchiveFence> | null;
    if (typeof f !== 'object' || f === null || typeof f.by !== 'string' || !GENERATION.test(f.by) || typeof f.at !== 'string' || typeof f.why !== 'string') throw bad();
    out.fenced = { by: f.by, at: f.at, why: f.why };
  }
  if (parsed.reclaimed_at !== undefined) {
    if (typeof parsed.reclaimed_at !== 'string') throw bad();
    out.reclaimed_at = parsed.reclaimed_at;
  }
  if (parsed.handed_over !== undefined) {
    const h = parsed.handed_over as Partial<HandoverResult> | null;
    if (typeof h !== 'object' || h === null || typeof h.handed_over_at !== 'string' || !Array.isArray(h.repositories) || typeof h.generation !== 'string') throw bad();
    out.handed_over = h as HandoverResult;
  }
  return out;
}

/**
 * Write archive.json. A fence or a handover already recorded there is kept whatever `value` says
 * (a claim, a promotion): only `clearFence` (`cairn archive reclaim`) drops them, so no rewrite
 * makes a directory write again by leaving the field out. An unreadable file is an error, never a silent un-fence.
 */
export async function writeArchiveFile(file: string, value: ArchiveFile, opts: { clearFence?: boolean } = {}): Promise<void> {
  let out = value;
  if (!opts.clearFence && (value.fenced === undefined || value.handed_over === undefined)) {
    const before = await readArchiveFile(file);
    if (before?.fenced && value.fenced === undefined) out = { ...out, fenced: before.fenced };
    if (before?.handed_over && value.handed_over === undefined) out = { ...out, handed_over: before.handed_over };
  }
  await writeFileDurable(file, `${JSON.stringify(out)}\n`);
}

/** Why a data directory may not follow (and so be promoted): a newer writer fenced it, or it handed the archive over; else null. */
export async function fencedRefusal(file: string, dataDir: string): Promise<string | null> {
  const local = await readArchiveFile(file);
  if (local?.handed_over) return `${dataDir} handed ${local.url} over${local.handed_over.successor ? ` to ${local.handed_over.successor}` : ''} at ${local.handed_over.handed_over_at} (recorded in archive.json): it may neither follow nor be promoted until cairn archive reclaim --data ${dataDir}; a standby of the new writer starts from a fresh data directory`;
  if (!local?.fenced) return null;
  return `${dataDir} was fenced by generation ${local.fenced.by} of ${local.url} (recorded in archive.json at ${local.fenced.at}): it may neither follow nor be promoted until cairn archive reclaim --data ${dataDir}`;
}

/** The refusal of every write by a directory that handed its archive over (503, docs/operations.md "Planned switchover"). */
export function handedOverRefusal(h: HandoverResult): string {
  return `handed over${h.successor ? ` to ${h.successor}` : ''} at ${h.handed_over_at}: this server accepts no more writes${h.successor ? `; send them to ${h.successor}` : '; send them to the archive\'s new writer'}`;
}
