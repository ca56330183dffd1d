// Pruning an archive (storage-layout.md §20, docs/operations.md "Archive retention"): mark and
// sweep, as restic's prune. The retention policy (lib/domain/archive-retention.ts) picks the
// manifests to keep; every key a kept manifest names is marked; then the dropped manifests are
// deleted FIRST and the unmarked objects after them, so a prune that stops midway leaves only
// garbage, never a manifest naming a deleted object.
//
// Safety rules:
// - A kept manifest that does not decode stops the prune before anything is deleted, naming it.
// - An unmarked object is deleted only when the listing says it is older than the grace
//   period: a writer uploads packs and log ranges before the manifest naming them, so a young
//   unmarked object may belong to a manifest not written yet. An object without a
//   modification time is never deleted.
// - Only `repositories/<index>/` is swept; `generations/`, `lease/` and anything else in the
//   archive are never touched, nor keys under `manifests/` that are not manifest keys.
// - Before the sweep the manifests are listed again and any manifest written since the first
//   listing is marked too.
//
// Idempotent: running it again with the same policy and clock deletes nothing more.
import { buffer } from 'node:stream/consumers';
import { Corrupt } from '../domain/errors.js';
import { LIFECYCLE_PURGED } from '../domain/repository.js';
import { decodeManifest, manifestPrefix, MANIFEST_MAGIC, MANIFEST_VERSION, parseManifestKey, purgedMarkerKey } from '../domain/archive-manifest.js';
import { chooseManifests, formatDuration, formatRetention } from '../domain/archive-retention.js';
import { ObjectStoreError, verified } from './object-store.js';
const REPOSITORIES = 'repositories/';
const HEADER_BYTES = 40; // magic, version, reserved, generations, repository, captured_at_us
const MISSING_SHOWN = 20;
async function listAll(store, prefix) {
    const out = [];
    let after;
    for (;;) {
        const page = await store.list(prefix, after === undefined ? {} : { after });
        out.push(...page.objects);
        if (page.next === undefined || page.objects.length === 0)
            return out;
        after = page.next;
    }
}
/** Run `fn` over `items`, `limit` at a time; the first failure stops new work and is thrown. */
async function eachLimited(items, limit, fn) {
    let next = 0;
    let failure;
    const worker = async () => {
        while (!failure && next < items.length) {
            const item = items[next++];
            try {
                await fn(item);
            }
            catch (err) {
                failure ??= { err };
            }
        }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
    if (failure)
        throw failure.err;
}
/** The repository index of a key under `repositories/<index>/`, or null. */
function repositoryOf(key) {
    const m = /^repositories\/(0|[1-9][0-9]{0,9})\//.exec(key);
    if (!m)
        return null;
    const n = Number(m[1]);
    return n <= 0xffff_ffff ? n : null;
}
/** The first bytes of a manifest, checked against its key: its capture time. */
async function readCapturedAt(store, key) {
    const parsed = parseManifestKey(key);
    const { body } = await store.get(key);
    const chunks = [];
    let length = 0;
    for await (const chunk of body) {
        chunks.push(chunk);
        length += chunk.length;
        if (length >= HEADER_BYTES)
            break; // leaving the loop destroys the stream: the rest is not needed
    }
    const head = Buffer.concat(chunks);
    const fail = (check) => new Corrupt(`archive manifest ${key}: ${check}`);
    if (head.length < HEADER_BYTES)
        throw fail('truncated header');
    if (!head.subarray(0, 8).equals(MANIFEST_MAGIC))
        throw fail('bad magic');
    if (head.readUInt8(8) !== MANIFEST_VERSION)
        throw fail(`unknown version ${head.readUInt8(8)}`);
    if (head.readBigUInt64LE(12) !== parsed.archiveGeneration || head.readUInt32LE(20) !== parsed.repository || head.readBigUInt64LE(24) !== parsed.commitGeneration) {
        throw fail('its generations or repository are not those of its key');
    }
    return head.readBigUInt64LE(32);
}
/** The whole manifest, decoded and checked against its key (Corrupt names the key). */
async function readManifest(store, key) {
    const parsed = parseManifestKey(key);
    const { body } = await store.get(key);
    const manifest = decodeManifest(await buffer(body), key);
    if (manifest.archiveGeneration !== parsed.archiveGeneration || manifest.repository !== parsed.repository || manifest.commitGeneration !== parsed.commitGeneration) {
        throw new Corrupt(`archive manifest ${key}: its generations or repository are not those of its key`);
    }
    return manifest;
}
/**
 * Whether a manifest's registry record (its entry of path `registry.rec`) says the authority is
 * purged (lifecycle 3, or tombstoned). A manifest without one, or whose record cannot be read,
 * is taken as not purged: the safe side keeps the newest manifest.
 */
async function recordsPurge(store, manifest) {
    const entry = manifest.entries.find((e) => e.path === 'registry.rec');
    if (!entry || entry.size < 40n || entry.size > 64n * 1024n)
        return false;
    try {
        const { body } = await store.get(entry.key);
        const record = await buffer(body.pipe(verified(`registry record ${entry.key}`, { sha256: entry.sha256, size: Number(entry.size) })));
        return record.readUInt8(4) === LIFECYCLE_PURGED || record.readUInt8(24) === 1;
    }
    catch (err) {
        if (err instanceof ObjectStoreError && (err.kind === 'not-found' || err.kind === 'integrity'))
            return false;
        throw err;
    }
}
/**
 * Prune the archive in `store` by `options.policy`. Resolves with what was deleted (or, with
 * `dryRun`, what would be). Throws Corrupt, naming the manifest, when a manifest it must keep
 * or read does not decode — before deleting anything; a store failure midway leaves every
 * remaining manifest whole (manifests go first) and is thrown as it came.
 *
 * A server may call it periodically on its shipping store: one prune at a time, outside any
 * commit, with its own clock; the shipper's writes need no pause (the grace period and the
 * always-kept newest manifest cover them).
 */
export async function pruneArchive(store, options) {
    const nowMs = (options.now ?? Date.now)();
    const limit = options.concurrency ?? 8;
    const log = options.log ?? (() => undefined);
    const dryRun = options.dryRun === true;
    try {
        return await prune(store, options, nowMs, limit, log, dryRun);
    }
    catch (err) {
        if (err instanceof Corrupt && !err.message.includes('(the prune stopped'))
            throw new Corrupt(`${err.message} (the prune stopped and deleted nothing)`);
        throw err;
    }
}
async function prune(store, options, nowMs, limit, log, dryRun) {
    log(`listing ${store.description}`);
    const listed = await listAll(store, REPOSITORIES);
    const manifestInfos = new Map();
    const objects = [];
    const repositories = new Set();
    const purgedMarkers = new Set();
    for (const info of listed) {
        const repository = repositoryOf(info.key);
        if (repository === null)
            continue; // not an authority's key: never pruned
        repositories.add(repository);
        if (parseManifestKey(info.key))
            manifestInfos.set(info.key, info);
        else if (info.key === purgedMarkerKey(repository))
            purgedMarkers.add(repository); // never swept
        else if (!info.key.startsWith(manifestPrefix(repository)))
            objects.push(info);
    }
    const listedManifests = new Set(manifestInfos.keys());
    log(`reading ${manifestInfos.size} manifest headers`);
    const times = [];
    await eachLimited([...manifestInfos.keys()], limit, async (key) => {
        try {
            times.push({ key, capturedAtUs: await readCapturedAt(store, key) });
        }
        catch (err) {
            // Listed but gone: deleted since (an earlier prune, seen through an eventually
            // consistent listing). Nothing to keep or delete.
            if (err instanceof ObjectStoreError && err.kind === 'not-found') {
                manifestInfos.delete(key);
                return;
            }
            throw err;
        }
    });
    // The newest manifest of each repository: always read (it is kept unless it records a purge).
    const decoded = new Map();
    const newest = new Map();
    for (const key of manifestInfos.keys()) {
        const repository = parseManifestKey(key).repository;
        const held = newest.get(repository);
        if (held === undefined || key > held)
            newest.set(repository, key);
    }
    const purged = new Set();
    await eachLimited([...newest], limit, async ([repository, key]) => {
        const manifest = await readManifest(store, key);
        decoded.set(key, manifest);
        if (purgedMarkers.has(repository) || (await recordsPurge(store, manifest)))
            purged.add(repository);
    });
    const choice = chooseManifests(times, options.policy, nowMs, purged);
    log(`keeping ${choice.keep.length} manifests, dropping ${choice.drop.length}; reading the kept ones`);
    // Mark: every key a kept manifest names.
    const marked = new Set();
    const mark = (manifest) => { for (const e of manifest.entries)
        marked.add(e.key); };
    await eachLimited(choice.keep, limit, async (key) => {
        const manifest = decoded.get(key) ?? (await readManifest(store, key));
        mark(manifest);
    });
    decoded.clear();
    const present = new Set(objects.map((o) => o.key));
    const missing = [...marked].filter((k) => !present.has(k)).sort();
    const graceEdge = nowMs - options.graceMs;
    const unreferenced = objects.filter((o) => !marked.has(o.key));
    const old = (o) => o.lastModified !== undefined && o.lastModified.getTime() <= graceEdge;
    let sweep = unreferenced.filter(old);
    const report = {
        dry_run: dryRun,
        policy: formatRetention(options.policy),
        grace: formatDuration(options.graceMs),
        now: new Date(nowMs).toISOString(),
        repositories: repositories.size,
        purged: [...purged].sort((a, b) => a - b),
        manifests: {
            total: manifestInfos.size,
            kept: choice.keep.length,
            deleted: choice.drop.length,
            deleted_bytes: choice.drop.reduce((n, k) => n + manifestInfos.get(k).size, 0),
        },
        objects: {
            total: objects.length,
            referenced: objects.length - unreferenced.length,
            unreferenced: unreferenced.length,
            within_grace: unreferenced.length - sweep.length,
            deleted: sweep.length,
            deleted_bytes: sweep.reduce((n, o) => n + o.size, 0),
        },
        missing: { count: missing.length, first: missing.slice(0, MISSING_SHOWN) },
        deleted_bytes: 0,
    };
    report.deleted_bytes = report.manifests.deleted_bytes + report.objects.deleted_bytes;
    if (dryRun)
        return report;
    // Manifests first: from here on, whatever stops the prune leaves only unreferenced objects.
    log(`deleting ${choice.drop.length} manifests`);
    await eachLimited(choice.drop, limit, (key) => store.delete(key));
    // A manifest written since the first listing may name an old unmarked object (a pack the
    // writer found already stored): mark what it names before the sweep.
    const fresh = [];
    for (const repository of repositories) {
        for (const info of await listAll(store, manifestPrefix(repository))) {
            if (parseManifestKey(info.key) && !listedManifests.has(info.key))
                fresh.push(info.key);
        }
    }
    await eachLimited(fresh, limit, async (key) => {
        try {
            mark(await readManifest(store, key));
        }
        catch (err) {
            if (err instanceof ObjectStoreError && err.kind === 'not-found')
                return; // written and deleted since
            if (err instanceof Corrupt)
                throw new Corrupt(`${err.message} (the prune stopped after deleting ${choice.drop.length} manifests and no other object)`);
            throw err;
        }
    });
    if (fresh.length > 0) {
        sweep = sweep.filter((o) => !marked.has(o.key));
        report.objects.deleted = sweep.length;
        report.objects.deleted_bytes = sweep.reduce((n, o) => n + o.size, 0);
        report.objects.referenced = objects.filter((o) => marked.has(o.key)).length;
        report.objects.unreferenced = objects.length - report.objects.referenced;
        report.objects.within_grace = report.objects.unreferenced - sweep.length;
        report.deleted_bytes = report.manifests.deleted_bytes + report.objects.deleted_bytes;
    }
    log(`deleting ${sweep.length} unreferenced objects`);
    await eachLimited(sweep, limit, (o) => store.delete(o.key));
    return report;
}
//# sourceMappingURL=prune.js.map