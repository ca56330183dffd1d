import { buildPack } from '../../store/pack.js';
/**
 * Stage `objects` (id → canonical bytes) the store does not hold yet as one pack of `kind` in
 * `tx`; `sizes`: each new tree's expanded size, recorded in its index entry (storage-layout.md §8).
 */
export function stagePack(tx, kind, objectKind, objects, sizes) {
    const fresh = [...objects].filter(([id]) => !tx.has(objectKind, id)).map(([id, raw]) => ({ id, raw }));
    if (fresh.length === 0)
        return;
    const pack = buildPack(kind, fresh);
    tx.writePack(kind, pack.packId, pack.bytes);
    for (const e of pack.entries)
        tx.addLocator({ kind: objectKind, id: e.id, pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32, expanded: sizes?.get(e.id) });
}
//# sourceMappingURL=server-objects.js.map