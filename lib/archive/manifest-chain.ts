// Incremental manifests (storage-layout.md §20.2.1): a manifest of version 2 names what changed
// since its base, the manifest of an earlier commit of the same repository and generation; the
// whole entry list is its base's (resolved down to a full manifest) less what it removes, plus
// what it adds. Readers follow the chain, bounded by MAX_CHAIN.
import { buffer } from 'node:stream/consumers';
import { Corrupt } from '../domain/errors.js';
import { applyDelta, decodeManifest, manifestKey, MAX_CHAIN, type Manifest, type ManifestEntry } from '../domain/archive-manifest.js';
import type { ObjectStore } from './object-store.js';

/**
 * Read manifest `key` and the chain of incremental manifests below it down to a full one: the
 * newest manifest, its whole entry list, and how many incremental manifests the chain holds.
 */
export async function resolveChain(store: ObjectStore, key: string, read: (store: ObjectStore, key: string) => Promise<Manifest> = readRaw): Promise<{ manifest: Manifest; entries: ManifestEntry[]; chain: number }> {
  const top = await read(store, key);
  const chain: Manifest[] = [top];
  let m = top;
  while (m.delta) {
    if (chain.length > MAX_CHAIN) throw new Corrupt(`archive manifest ${key}: its chain of incremental manifests is longer than ${MAX_CHAIN}`);
    const baseKey = manifestKey(m.repository, m.archiveGeneration, m.delta.baseCommit);
    const base = await read(store, baseKey);
    if (base.delta ? base.delta.chainLength !== m.delta.chainLength - 1 : m.delta.chainLength !== 1) throw new Corrupt(`archive manifest ${key}: the chain length of ${baseKey} does not follow`);
    chain.push(base);
    m = base;
  }
  let entries = chain[chain.length - 1]!.entries;
  for (let i = chain.length - 2; i >= 0; i--) {
    const d = chain[i]!;
    entries = applyDelta(entries, d, manifestKey(d.repository, d.archiveGeneration, d.commitGeneration));
  }
  return { manifest: top, entries, chain: chain.length - 1 };
}

async function readRaw(store: ObjectStore, key: string): Promise<Manifest> {
  const got = await store.get(key);
  return decodeManifest(await buffer(got.body), key);
}

