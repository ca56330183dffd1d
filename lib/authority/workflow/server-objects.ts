// Objects the server builds itself (a land's merged blobs and trees, a patchset of applied
// suggestions) enter the store the way uploads do: as one object pack and one tree pack,
// adopted by the transaction's commit (storage-layout.md §17, "Records written together").
import type { Txn } from '../../store/content-store.js';
import { buildPack, type PackKind } from '../../store/pack.js';

/** Blobs written to a pack no commit has adopted yet (a push's, of any size): sizes and bytes by id. */
export interface SpooledBlobs {
  size(id: string): number | undefined;
  read(id: string): Promise<Buffer | undefined>;
}

/**
 * Trees and blobs (id → canonical bytes) the server built for a snapshot it has not stored yet;
 * `spooled`: more of its blobs, in a pack on disk rather than in memory.
 */
export interface BuiltObjects { trees: Map<string, Buffer>; blobs: Map<string, Buffer>; spooled?: SpooledBlobs }

/**
 * Stage `objects` (id → canonical bytes) the store does not hold yet as one pack of `kind` in
 * `tx`; `sizes`: each new tree's expanded size, recorded in its index entry (storage-layout.md §8).
 */
export function stagePack(tx: Txn, kind: PackKind, objectKind: 'blob' | 'tree', objects: Map<string, Buffer>, sizes?: Map<string, number>): void {
  const fresh = [...objects].filter(([id]) => !tx.has(objectKind, id)).map(([id, raw]) => ({ id, raw }));
  if (fresh.length === 0) return;
  const pack = buildPack(kind, fresh);
  tx.writePack(kind, pack.packId, pack.bytes);
  for (const e of pack.entries) tx.addLocator({ kind: objectKind, id: e.id, pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32, expanded: sizes?.get(e.id) });
}
