// Backfill of the time index (storage-layout.md §20.1.1) for manifests written before it: each
// gets its marker, then the index's origin moves down to the oldest of them, so `restore --at`
// finds any time with a constant number of requests. Markers first, origin last: a reader never
// sees an origin that claims a manifest without its marker. A manifest that cannot be read keeps
// no marker, and the origin stays above it (a reader then still reads it, and reports it).
import { manifestPrefix, parseManifestKey, timeIndexOriginKey, timeMarkerKey } from '../domain/archive-manifest.js';
import { Corrupt, NotFound } from '../domain/errors.js';
import { sha256Hex, type ObjectStore } from './object-store.js';
import { readOneManifest, readTimeIndexOrigin } from './restore.js';

const EMPTY_SHA256 = sha256Hex(Buffer.alloc(0));
/** Manifests read at once while backfilling. */
const AT_ONCE = 8;

export interface TimeIndexReport {
  repository: number;
  /** The origin before and after (a manifest key; null: no index). */
  from_before: string | null;
  from_after: string | null;
  /** Markers written (or, with dryRun, that would be). */
  indexed: number;
  /** Manifests that could not be read: no marker, and the origin stays above them. */
  damaged: { key: string; problem: string }[];
}

export async function backfillTimeIndex(store: ObjectStore, index: number, options: { dryRun?: boolean } = {}): Promise<TimeIndexReport> {
  const before = await readTimeIndexOrigin(store, index);
  // Every manifest below the origin (all of them without one), in key order.
  const keys: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.list(manifestPrefix(index), after ? { after } : {});
    for (const o of page.objects) {
      if (before !== null && o.key >= before) break;
      if (parseManifestKey(o.key)?.repository === index) keys.push(o.key);
    }
    const last = page.objects.at(-1)?.key;
    if (!page.next || (before !== null && last !== undefined && last >= before)) break;
    after = page.next;
  }
  const report: TimeIndexReport = { repository: index, from_before: before, from_after: before, indexed: 0, damaged: [] };
  if (keys.length === 0) return report;
  const damaged = new Set<string>();
  for (let i = 0; i < keys.length; i += AT_ONCE) {
    await Promise.all(keys.slice(i, i + AT_ONCE).map(async (key) => {
      let captured: bigint;
      try {
        captured = (await readOneManifest(store, key)).capturedAtUs;
      } catch (err) {
        if (!(err instanceof Corrupt) && !(err instanceof NotFound)) throw err;
        damaged.add(key);
        report.damaged.push({ key, problem: err.message });
        return;
      }
      const m = parseManifestKey(key)!;
      if (!options.dryRun) await store.put(timeMarkerKey(index, captured, m.archiveGeneration, m.commitGeneration), Buffer.alloc(0), { sha256: EMPTY_SHA256, size: 0 });
      report.indexed++;
    }));
  }
  report.damaged.sort((a, b) => (a.key < b.key ? -1 : 1));
  // The new origin: the oldest manifest above every damaged one (all of them marked from there on).
  const lastDamaged = report.damaged.at(-1)?.key;
  const from = lastDamaged === undefined ? keys[0]! : keys.find((k) => k > lastDamaged) ?? before;
  if (from !== null && from !== before) {
    if (!options.dryRun) {
      const body = Buffer.from(`${JSON.stringify({ from, written_at: new Date().toISOString() })}\n`);
      await store.put(timeIndexOriginKey(index), body, { sha256: sha256Hex(body), size: body.length });
    }
    report.from_after = from;
  }
  return report;
}
