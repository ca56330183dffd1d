// A consistent capture of one authority's commit point, for a copier that runs beside commits
// (the archive's shipper): the 512-byte commit-point record, the state it encodes, and an open
// read handle on every file that state names. Taken inside one commit-queue barrier, so no
// commit, merge or compaction runs while the handles are opened; after it, a merge or a
// compaction may unlink a file, and the open handle still reads its bytes (an unlinked file
// lives while a descriptor is open). The capture never reads file contents itself: the barrier
// stays as short as a few opens.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { encodeCommitRecord, type CommitState } from './commit-point.js';
import { INDEX_NAMES, LOG_NAMES, type AuthorityLayout, type LogName } from './layout.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE, type PackKind } from './pack.js';

export type CapturedKind = 'pack' | 'log' | 'index' | 'identity' | 'lines' | 'checkpoint';

export interface CapturedFile {
  kind: CapturedKind;
  /** Path below the authority directory, `/`-separated (`workflow.log`, `index/blobs.3.idx`, `packs/objects/<id>.pack`). */
  path: string;
  /** Bytes to take: a log's committed length; the file's length otherwise. */
  size: number;
  /** For a log: its name; for a pack: 'objects' or 'trees'. */
  log?: LogName;
  packDir?: 'objects' | 'trees';
  packId?: string;
  handle: fsp.FileHandle;
}

export interface Capture {
  /** The commit-point record as commit.bin holds it (512 bytes, CRC included). */
  record: Buffer;
  state: CommitState;
  /** When the capture was taken (µs since the epoch). */
  capturedAtUs: bigint;
  files: CapturedFile[];
  /** Every committed pack, opened or not. */
  packs: { dir: 'objects' | 'trees'; id: string }[];
  /** Close every handle (idempotent). */
  close(): Promise<void>;
}

/** What the capture opens: every log, index segment and identity file; packs and the checkpoint only when asked. */
export interface CaptureWants {
  pack?: (dir: 'objects' | 'trees', id: string) => boolean;
  /** Open workflow.ckpt when present. */
  checkpoint?: boolean;
  /** Open index segments and lines files not yet copied (default: all). */
  file?: (relPath: string) => boolean;
}

const PACK_DIRS: [PackKind, 'objects' | 'trees'][] = [[PACK_KIND_OBJECT, 'objects'], [PACK_KIND_TREE, 'trees']];

/**
 * Open the files of `state` (called inside a barrier by ContentStore.capture). On a failure,
 * every handle opened so far is closed and the error thrown.
 */
export async function openCapture(layout: AuthorityLayout, state: CommitState, committedPacks: (kind: PackKind) => string[], wants: CaptureWants): Promise<Capture> {
  const files: CapturedFile[] = [];
  const rel = (abs: string): string => path.relative(layout.root, abs).split(path.sep).join('/');
  const close = async (): Promise<void> => {
    const all = files.splice(0);
    await Promise.all(all.map((f) => f.handle.close().catch(() => {})));
  };
  const add = async (kind: CapturedKind, abs: string, extra: Partial<CapturedFile> = {}, size?: number, optional = false): Promise<void> => {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(abs, 'r');
    } catch (err) {
      if (optional && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      const length = size ?? (await handle.stat()).size;
      files.push({ kind, path: rel(abs), size: length, handle, ...extra });
    } catch (err) {
      await handle.close().catch(() => {});
      throw err;
    }
  };
  try {
    const wantFile = wants.file ?? (() => true);
    await add('identity', layout.identityFile);
    for (const name of LOG_NAMES) {
      const length = state.logs[name];
      if (length === 0) continue; // no header yet: the file may not exist
      await add('log', layout.logFile(name, state.log_files[name]), { log: name }, length);
    }
    for (const name of INDEX_NAMES) {
      for (const seg of state.segments[name]) {
        const abs = layout.indexSegment(name, seg);
        if (wantFile(rel(abs))) await add('index', abs);
      }
    }
    if (state.lines_gen) {
      const abs = layout.linesFile(state.lines_gen);
      if (wantFile(rel(abs))) await add('lines', abs);
    }
    if (wants.checkpoint) await add('checkpoint', layout.workflowCheckpoint, {}, undefined, true);
    if (wants.pack) {
      for (const [kind, dir] of PACK_DIRS) {
        for (const id of committedPacks(kind).sort()) {
          if (wants.pack(dir, id)) await add('pack', layout.packFile(dir, id), { packDir: dir, packId: id });
        }
      }
    }
  } catch (err) {
    await close();
    throw err;
  }
  const packs = PACK_DIRS.flatMap(([kind, dir]) => committedPacks(kind).sort().map((id) => ({ dir, id })));
  return { record: encodeCommitRecord(state), state: structuredClone(state), capturedAtUs: BigInt(Date.now()) * 1000n, files, packs, close };
}
