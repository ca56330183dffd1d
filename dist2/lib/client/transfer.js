// push, pull and sync over the bulk remote-sync interface. Transfer order (spec): plan, upload
// missing packs, commit rows and snapshots, then line handling. Pull: manifest, download its
// packs, read the objects locally.
import { createWriteStream, mkdtempSync, promises as fsp } from 'node:fs';
import { setMaxListeners } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { decodeTree, refusedEntryName, snapshotId } from '../domain/content.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS, describeOverLimit, expandedSize, MAX_SNAPSHOT_PATHS_BOUND, pathsOf } from '../domain/tree-size.js';
import { decodeObjectFrame, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../store/pack.js';
import { CairnClient, ServerError } from './http.js';
import { NO_PROGRESS, progressFor } from './progress.js';
import { listTree, prepareOutput, RefusedNamesError, scanDirectory } from './worktree.js';
import { MaterializePool } from './materialize-worker.js';
import { StalledError, StallWatch, stallSecondsFromEnv } from './stall.js';
import { PackWorker } from './pack-worker.js';
const MEDIA = {
    [PACK_KIND_OBJECT]: 'application/vnd.svc.remote-sync.object-pack+zstd',
    [PACK_KIND_TREE]: 'application/vnd.svc.remote-sync.tree-pack+zstd',
};
const PACK_PATH = { [PACK_KIND_OBJECT]: 'object-packs', [PACK_KIND_TREE]: 'tree-packs' };
const SYNC = '/remote-sync/zstd-bulk';
/** Raw bytes per pack before a new pack is started. */
export const PACK_TARGET_BYTES = 16 * 1024 * 1024;
/** Objects per pack: well under the server's upload bound (MAX_UPLOAD_PACK_ENTRIES). */
export const PACK_TARGET_OBJECTS = 100_000;
/** Raw bytes of a push's first object pack. */
export const FIRST_PACK_TARGET_BYTES = 4 * 1024 * 1024;
/** CAIRN_TIMING=1 prints the duration of each transfer phase to stderr. */
function timer() {
    let last = performance.now();
    return (label) => {
        if (process.env.CAIRN_TIMING !== '1')
            return;
        const now = performance.now();
        process.stderr.write(`[timing] ${label}: ${(now - last).toFixed(0)} ms (at ${now.toFixed(0)})\n`);
        last = now;
    };
}
/** The line moved past the working copy's base: the push is refused, nothing changed. */
export class LineMovedError extends Error {
    line;
    base;
    head;
    constructor(line, base, head) {
        super(`line ${line} moved since your base ${base ? base.slice(0, 12) : '(empty)'} (now at ${head ? head.slice(0, 12) : 'nothing'}): update first (cairn update)`);
        this.line = line;
        this.base = base;
        this.head = head;
    }
}
/** Room in a slab past the pack target, so the object that crosses it rarely needs a larger slab. */
const SLAB_SLACK_BYTES = 4 * 1024 * 1024;
/**
 * Packs objects as they are found and uploads each pack as soon as it is built (plan, then PUT
 * when missing), at most two uploads in flight, so the server verifies one pack while the
 * client compresses the next. Pack bytes are dropped once uploaded. Packs are deterministic
 * (same objects in walk order, same level), so a push re-run after an interruption builds the
 * same pack ids and the plan reports the ones that arrived (staged) as present.
 */
export class PackPipeline {
    client;
    repo;
    level;
    progress;
    stopAfterUploads;
    targetBytes;
    packs = [];
    uploadedPacks = 0;
    uploadedBytes = 0;
    /** The batch being filled: objects copied end to end into one slab (moved to the worker whole). */
    batch = null;
    /** Slabs and spent pack buffers back from the worker and the uploads, reused (bounded below). */
    freeSlabs = [];
    spares = [];
    inflight = new Set();
    /** Pack workers, used in turn (CAIRN_PUSH_WORKERS, default 1). */
    workers = Array.from({ length: Math.max(1, Number(process.env.CAIRN_PUSH_WORKERS) || 1) }, () => new PackWorker());
    turn = 0;
    /** Time the scan spent waiting for a free pack slot (CAIRN_TIMING). */
    waitedMs = 0;
    /** Object packs started so far (the first one is smaller). */
    objectBatches = 0;
    constructor(client, repo, level, progress, stopAfterUploads = Infinity, targetBytes = PACK_TARGET_BYTES) {
        this.client = client;
        this.repo = repo;
        this.level = level;
        this.progress = progress;
        this.stopAfterUploads = stopAfterUploads;
        this.targetBytes = targetBytes;
    }
    /** Where the scan may read the next file: the free end of the current batch's slab. */
    readTarget() {
        const batch = (this.batch ??= { slab: this.takeSlab(0), objects: [], fill: 0 });
        return batch.slab.subarray(batch.fill);
    }
    /** Add an object to the current batch (see `place`: `raw` may be a reused buffer). */
    async add(id, raw) {
        const batch = (this.batch ??= { slab: this.takeSlab(0), objects: [], fill: 0 });
        this.place(batch, id, raw);
        // The first pack is smaller, so the pack worker starts early instead of idling while the
        // scan reads a whole pack's worth (the worker, not the scan, sets the pace).
        const target = this.objectBatches === 0 ? Math.min(FIRST_PACK_TARGET_BYTES, this.targetBytes) : this.targetBytes;
        if (batch.fill >= target || batch.objects.length >= PACK_TARGET_OBJECTS) {
            this.objectBatches++;
            await this.flush(PACK_KIND_OBJECT);
        }
    }
    takeSlab(min) {
        const i = this.freeSlabs.findIndex((b) => b.byteLength >= min);
        return Buffer.from(i >= 0 ? this.freeSlabs.splice(i, 1)[0] : new SharedArrayBuffer(Math.max(min, this.targetBytes + SLAB_SLACK_BYTES)));
    }
    /** Append an object: bytes the scan read into `readTarget()` are taken where they lie, others copied. */
    place(batch, id, raw) {
        const inPlace = raw.buffer === batch.slab.buffer && raw.byteOffset === batch.slab.byteOffset + batch.fill;
        if (!inPlace && batch.fill + raw.length > batch.slab.length) {
            // The object that crosses the target and is larger than the slack: a larger slab.
            const bigger = this.takeSlab(batch.fill + raw.length);
            batch.slab.copy(bigger, 0, 0, batch.fill);
            this.recycleSlab(batch.slab.buffer);
            batch.slab = bigger;
        }
        if (!inPlace)
            raw.copy(batch.slab, batch.fill);
        batch.objects.push({ id, offset: batch.fill, length: raw.length });
        batch.fill += raw.length;
    }
    /** Slabs are kept for reuse unless oversized (one huge file must not pin its memory). */
    recycleSlab(slab) {
        if (slab.byteLength <= 2 * (this.targetBytes + SLAB_SLACK_BYTES) && this.freeSlabs.length < 4)
            this.freeSlabs.push(slab);
    }
    /**
     * Hand a batch to the pack worker; its upload follows. At most three batches in flight, except
     * that `lastOfScan` (the scan's last partial pack, whose bytes are in memory already) goes at
     * once: waiting would only delay its compression behind the uploads.
     */
    async flush(kind, objects, lastOfScan = false) {
        let batch;
        if (objects) {
            batch = { slab: this.takeSlab(objects.reduce((n, o) => n + o.raw.length, 0)), objects: [], fill: 0 };
            for (const o of objects)
                this.place(batch, o.id, o.raw);
        }
        else {
            batch = this.batch;
            this.batch = null;
        }
        if (this.failure !== null) {
            await this.settle();
            throw this.failure;
        }
        if (!batch || !batch.objects.length) {
            if (batch)
                this.recycleSlab(batch.slab.buffer);
            return;
        }
        if (!lastOfScan) {
            // Waiting for a slot never rejects: a failed upload is reported once all others settled.
            const waitStart = performance.now();
            while (this.inflight.size >= 3)
                await Promise.race([...this.inflight].map((p) => p.catch(() => undefined)));
            this.waitedMs += performance.now() - waitStart;
        }
        const task = this.workers[this.turn++ % this.workers.length].build(kind, batch.slab.buffer, batch.objects, this.level, this.spares.pop() ?? null).then(async (pack) => {
            this.recycleSlab(pack.slab);
            this.packs.push({ packId: pack.packId, kind, byteLength: pack.bytes.length, entries: pack.entries });
            await this.upload(pack);
            if (this.spares.length < 3)
                this.spares.push(pack.bytes.buffer);
        });
        const tracked = task.finally(() => this.inflight.delete(tracked));
        this.inflight.add(tracked);
        tracked.catch((err) => { if (this.failure === null)
            this.failure = err; }); // surfaced by flush()/finish()
    }
    failure = null;
    /** Wait until no build or upload is in flight (whatever their outcome). */
    async settle() {
        while (this.inflight.size)
            await Promise.allSettled(this.inflight);
    }
    async upload(pack) {
        const plan = await this.client.json('POST', this.client.repoPath(this.repo, `${SYNC}/plan`), {
            snapshot_ids: [],
            object_packs: pack.kind === PACK_KIND_OBJECT ? [pack.packId] : [],
            tree_packs: pack.kind === PACK_KIND_TREE ? [pack.packId] : [],
        });
        if ([...plan.missing_object_pack_ids, ...plan.missing_tree_pack_ids].includes(pack.packId)) {
            if (this.uploadedPacks >= this.stopAfterUploads)
                throw new Error('stopped before the upload (test hook)');
            await this.client.putRaw(this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[pack.kind]}/${pack.packId}`), MEDIA[pack.kind], pack.bytes);
            this.uploadedPacks++;
            this.uploadedBytes += pack.bytes.length;
        }
        if (pack.kind === PACK_KIND_OBJECT)
            this.progress.increment(pack.entries.reduce((n, e) => n + e.raw_length, 0));
    }
    /** Wait for every build and upload; on a failure, let the others settle first, then throw. */
    async finish() {
        await this.flush(PACK_KIND_OBJECT);
        await this.settle();
        if (this.failure !== null)
            throw this.failure;
    }
    async close() {
        await Promise.all(this.workers.map((w) => w.close()));
    }
}
/** A snapshot's file projection without content (paths, kinds, blob ids, tree ids). */
export function listSnapshot(client, repo, id) {
    return client.json('GET', client.repoPath(repo, `/snapshots/${id}?include_content=false`));
}
/** At most this many other line heads are consulted for blobs the server already holds. */
const MAX_KNOWN_HEADS = 8;
/**
 * What the server already holds, learned from snapshots it can name: the parent, the target
 * line's head, then the most recently moved other line heads. Their listings (no content) name
 * every blob and tree; a push packs only the rest.
 */
async function knownContent(client, repo, first, allLines) {
    const ids = new Set(first.filter((x) => !!x));
    const lines = await allLines.catch(() => ({ lines: [] }));
    const others = lines.lines
        .filter((l) => l.head_snapshot_id && !ids.has(l.head_snapshot_id))
        .sort((a, b) => (b.updated_at_s ?? 0) - (a.updated_at_s ?? 0))
        .slice(0, MAX_KNOWN_HEADS)
        .map((l) => l.head_snapshot_id);
    for (const id of others)
        ids.add(id);
    const listings = new Map();
    const blobs = new Set();
    const trees = new Set();
    const required = new Set(first.filter((x) => !!x));
    await Promise.all([...ids].map(async (id) => {
        let listing;
        try {
            listing = await listSnapshot(client, repo, id);
        }
        catch (err) {
            // Other lines' heads are only hints: one the server will not list (a snapshot over its
            // limit, kept from before it) leaves its content unknown, not the push failed.
            if (!required.has(id) && err instanceof ServerError && err.status < 500)
                return;
            throw err;
        }
        listings.set(id, listing);
        for (const f of listing.files)
            blobs.add(f.blob_id);
        for (const d of listing.directories)
            trees.add(d.tree_id);
    }));
    return { blobs, trees, listings };
}
function asProgress(p) {
    return typeof p === 'boolean' ? progressFor(process.stderr, p) : p;
}
export async function push(o) {
    const client = new CairnClient(o.server);
    const t = timer();
    // Unknown repository (or unreachable server) is reported before the tree is read (and before
    // a listing error: a missing directory). The line and the list of lines are asked for at the
    // same time (one round trip, not three), and the tree is listed while they travel.
    if (o.line === undefined && (o.moveLine || o.base !== undefined))
        throw new Error('push: a line is needed to move it or to push a working copy');
    const repository = client.requireRepository(o.repo);
    const lineRead = o.line === undefined ? Promise.resolve(null) : client.lineOrNull(o.repo, o.line);
    const allLines = client.json('GET', client.repoPath(o.repo, '/lines'));
    const listing = listTree(o.dir);
    for (const p of [lineRead, allLines, listing])
        p.catch(() => undefined);
    await repository;
    const line = await lineRead;
    const lineHead = line?.head_snapshot_id ?? null;
    const workingCopy = o.base !== undefined;
    if (workingCopy && lineHead !== o.base)
        throw new LineMovedError(o.line, o.base ?? null, lineHead);
    const parent = workingCopy ? o.base ?? null : o.parent ?? lineHead;
    const expectedHead = workingCopy ? o.base ?? null : lineHead;
    // Known before the scan, so each file is read once and packed in the same pass if it is new.
    const known = await knownContent(client, o.repo, [parent, lineHead], allLines);
    const parentRecord = parent ? known.listings.get(parent).snapshot : null;
    t('known content');
    const progress = asProgress(o.progress);
    progress.start('push', 0);
    const pipeline = new PackPipeline(client, o.repo, o.compressionLevel ?? 3, progress, o.stopAfterUploads, o.packTargetBytes);
    let scan;
    const unchangedTree = () => parentRecord !== null && parentRecord.root_tree_id === scan.rootTreeId && !o.parent && o.message === undefined;
    try {
        scan = await scanDirectory(o.dir, async (id, read) => {
            if (!known.blobs.has(id))
                await pipeline.add(id, read());
        }, {
            // The total costs a stat of every path before the first read: only for a drawn bar.
            onTotal: progress === NO_PROGRESS ? undefined : (bytes) => progress.setTotal(bytes),
            onFile: (size, id, first) => { if (!first || known.blobs.has(id))
                progress.increment(size); },
            readTarget: () => pipeline.readTarget(),
            listed: await listing,
        });
        t(`scan+pack (waited ${pipeline.waitedMs.toFixed(0)} ms for the pack worker)`);
        await pipeline.flush(PACK_KIND_OBJECT, undefined, true); // the last partial pack, before the (small) tree pack
        for (const rel of scan.skipped)
            o.onSkipped?.(rel);
        if (!unchangedTree()) {
            const missingTrees = [...scan.trees.entries()].filter(([id]) => !known.trees.has(id)).sort(([a], [b]) => (a < b ? -1 : 1));
            for (let i = 0; i < missingTrees.length; i += PACK_TARGET_OBJECTS) {
                await pipeline.flush(PACK_KIND_TREE, missingTrees.slice(i, i + PACK_TARGET_OBJECTS).map(([id, raw]) => ({ id, raw })));
            }
        }
        await pipeline.finish();
    }
    finally {
        progress.stop();
        await pipeline.settle(); // an interrupted push leaves no upload running behind it
        await pipeline.close();
    }
    t('upload');
    const base = { root_tree_id: scan.rootTreeId, line: o.line ?? null, files: scan.fileCount, bytes: scan.byteCount };
    if (unchangedTree()) {
        return { ...base, snapshot_id: parent, parent_snapshot_ids: parentRecord.parent_snapshot_ids, line_updated: false, unchanged: true, uploaded_packs: 0, uploaded_bytes: 0 };
    }
    const snapshot = {
        root_tree_id: scan.rootTreeId,
        parent_snapshot_ids: parent ? [parent] : [],
        created_at_s: Math.floor(Date.now() / 1000),
        message: o.message ?? null,
    };
    const id = snapshotId(snapshot);
    const packs = pipeline.packs;
    let commit;
    try {
        commit = await client.json('POST', client.repoPath(o.repo, `${SYNC}/commit`), {
            contract: 'svc.remote_sync.zstd_bulk.commit.v1',
            object_packs: packs.filter((p) => p.kind === PACK_KIND_OBJECT).map(packRow),
            tree_packs: packs.filter((p) => p.kind === PACK_KIND_TREE).map(packRow),
            blob_locators: packs.filter((p) => p.kind === PACK_KIND_OBJECT).flatMap((p) => p.entries.map((e) => ({ blob_id: e.id, ...locatorFields(p.packId, e) }))),
            tree_locators: packs.filter((p) => p.kind === PACK_KIND_TREE).flatMap((p) => p.entries.map((e) => ({ tree_id: e.id, ...locatorFields(p.packId, e) }))),
            snapshots: [{ snapshot_id: id, ...snapshot }],
            line_update: o.moveLine ? { line_name: o.line, head_snapshot_id: id, expected_head_snapshot_id: expectedHead } : null,
        });
    }
    catch (err) {
        if (workingCopy && err instanceof ServerError && err.status === 409) {
            const now = await client.lineOrNull(o.repo, o.line).catch(() => null);
            if ((now?.head_snapshot_id ?? null) !== expectedHead)
                throw new LineMovedError(o.line, expectedHead, now?.head_snapshot_id ?? null);
        }
        throw err;
    }
    t('commit');
    return {
        ...base,
        snapshot_id: id,
        parent_snapshot_ids: snapshot.parent_snapshot_ids,
        line_updated: commit.line_head_updated_after_ingest === true,
        unchanged: false,
        uploaded_packs: pipeline.uploadedPacks,
        uploaded_bytes: pipeline.uploadedBytes,
    };
}
export function packRow(p) {
    return { pack_id: p.packId, byte_length: p.byteLength, object_count: p.entries.length };
}
export function locatorFields(packId, e) {
    return { pack_id: packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') };
}
export async function resolveSnapshot(client, repo, line, snapshot) {
    if (snapshot)
        return snapshot;
    const found = await client.lineOrNull(repo, line);
    if (!found)
        throw new Error(`line ${line} does not exist in repository ${repo} on ${client.base}`);
    if (!found.head_snapshot_id)
        throw new Error(`line ${line} has no head snapshot`);
    return found.head_snapshot_id;
}
/** Packs up to this size are held in (shared) memory; larger ones are downloaded to a file first. */
const IN_MEMORY_PACK_BYTES = 64 * 1024 * 1024;
/** Object packs in memory or on disk at once, at most (bounds memory when writing is the slow side). */
const MAX_PACKS_AHEAD = 4;
/** Concurrent pack downloads. */
const DOWNLOADS = 3;
/** Raw bytes per materialize job: small enough that both workers stay busy to the last file. */
const JOB_RAW_BYTES = 2 * 1024 * 1024;
/**
 * Downloads object packs (three at a time, at most four held) and hands their objects to the
 * materialize workers in runs of about JOB_RAW_BYTES as soon as a run's bytes have arrived.
 * Downloads may start before the trees are read (which packs to fetch comes from the manifest);
 * objects are handed out once `plan()` has said which ones the snapshot needs and where they go.
 *
 * `done` settles from whichever event comes last: a job finishing, a download ending (its pack
 * released, or a dropped one wound down), `plan()`, a failure. Each of them calls `checkDone()`,
 * and "done" means nothing at all is in flight: no pack held, queued or downloading, no job.
 */
class PackIntake {
    client;
    repo;
    temp;
    pool;
    out;
    sizes;
    onProgress;
    onActivity;
    hooks;
    queue;
    packs = new Map();
    ahead = 0;
    active = 0;
    planned = false;
    needed = null;
    failure = null;
    jobs = new Set();
    settle = null;
    done;
    files = 0;
    bytes = 0;
    constructor(client, repo, temp, pool, out, order, sizes, onProgress, onActivity = () => undefined, hooks = {}) {
        this.client = client;
        this.repo = repo;
        this.temp = temp;
        this.pool = pool;
        this.out = out;
        this.sizes = sizes;
        this.onProgress = onProgress;
        this.onActivity = onActivity;
        this.hooks = hooks;
        this.queue = [...order];
        this.done = new Promise((resolve, reject) => { this.settle = { resolve, reject }; });
        this.done.catch(() => undefined); // awaited by the caller
        this.startDownloads();
    }
    /** The snapshot's objects per pack; packs not named are not (or no longer) fetched. */
    plan(byPack) {
        this.planned = true;
        this.needed = new Set(byPack.keys());
        for (const id of byPack.keys())
            if (!this.queue.includes(id) && !this.packs.has(id))
                this.queue.push(id);
        for (let i = this.queue.length - 1; i >= 0; i--)
            if (!this.needed.has(this.queue[i]))
                this.queue.splice(i, 1);
        for (const pack of [...this.packs.values()]) {
            if (!this.needed.has(pack.id))
                this.release(pack, true);
            else {
                pack.entries = byPack.get(pack.id).sort((a, b) => a.offset - b.offset);
                this.pump(pack);
            }
        }
        this.byPack = byPack;
        this.startDownloads();
        this.checkDone();
    }
    /** What the intake is waiting for, for a stall message. */
    describe() {
        const packs = [...this.packs.values()].filter((p) => !p.complete).map((p) => {
            const size = this.sizes.get(p.id);
            return `object pack ${p.id.slice(0, 12)}…: ${p.received} of ${size === undefined || size === Infinity ? '?' : size} bytes`;
        });
        const parts = [...packs];
        if (this.jobs.size)
            parts.push(`${this.jobs.size} materialize job(s) running`);
        if (this.queue.length)
            parts.push(`${this.queue.length} pack(s) queued`);
        return parts.length ? `waiting for ${parts.join('; ')}` : 'waiting for the object packs';
    }
    byPack = null;
    dropped = new Set();
    startDownloads() {
        while (!this.failure && this.active < DOWNLOADS && this.ahead < MAX_PACKS_AHEAD && this.queue.length) {
            const id = this.queue.shift();
            this.active++;
            this.ahead++;
            // A pack dropped as not needed ends with an error from its stopped response: not a failure.
            void this.download(id).catch((err) => { if (!this.dropped.has(id))
                this.fail(err); }).finally(() => {
                this.active--;
                this.startDownloads();
                this.checkDone();
            });
        }
    }
    async download(id) {
        const size = this.sizes.get(id) ?? Infinity;
        const pack = { id, shared: null, file: null, received: 0, complete: false, entries: null, next: 0, running: 0, response: null, jobs: new Set() };
        if (this.byPack)
            pack.entries = this.byPack.get(id).sort((a, b) => a.offset - b.offset);
        this.packs.set(id, pack);
        const urlPath = this.client.repoPath(this.repo, `${SYNC}/${PACK_PATH[PACK_KIND_OBJECT]}/${id}`);
        const res = await this.client.openDownload(urlPath);
        // Dropped, or the pull failed, while the response was on its way: stop it here.
        if (this.failure || !this.packs.has(id)) {
            res.destroy();
            return;
        }
        pack.response = res;
        this.onActivity();
        if (size > IN_MEMORY_PACK_BYTES) {
            pack.file = path.join(this.temp, `${id}.pack`);
            res.on('data', (chunk) => {
                pack.received += chunk.length;
                this.onActivity();
            });
            await pipeline(res, createWriteStream(pack.file));
        }
        else {
            pack.shared = new SharedArrayBuffer(size);
            const view = Buffer.from(pack.shared);
            for await (const chunk of res) {
                if (pack.received + chunk.length > size)
                    throw new Error(`object pack ${id} is longer than the ${size} bytes the manifest says`);
                chunk.copy(view, pack.received);
                pack.received += chunk.length;
                this.onActivity();
                this.pump(pack);
            }
            if (pack.received !== size)
                throw new Error(`object pack ${id} ended after ${pack.received} of ${size} bytes`);
            await this.hooks.packArrived?.(id, () => Promise.allSettled([...pack.jobs]).then(() => undefined));
        }
        pack.response = null;
        pack.complete = true;
        this.pump(pack);
    }
    /** Hand out every run of objects whose bytes are here; release the pack once all are written. */
    pump(pack) {
        if (!pack.entries || this.failure)
            return;
        const entries = pack.entries;
        const available = pack.complete ? Infinity : pack.shared ? pack.received : 0;
        while (pack.next < entries.length) {
            let end = pack.next;
            let raw = 0;
            while (end < entries.length && raw < JOB_RAW_BYTES && entries[end].offset + entries[end].length <= available)
                raw += entries[end++].raw_length;
            if (end === pack.next)
                break;
            // A short run mid-download waits for more bytes, unless it is all that is left.
            if (raw < JOB_RAW_BYTES && end < entries.length && !pack.complete)
                break;
            const run = entries.slice(pack.next, end);
            pack.next = end;
            this.dispatch(pack, run);
        }
        if (pack.complete && pack.next === entries.length && pack.running === 0)
            this.release(pack, false);
    }
    dispatch(pack, run) {
        pack.running++;
        const source = pack.shared ? { shared: pack.shared } : { file: pack.file };
        const ran = this.pool.run(this.out, run, source, this.onProgress);
        const held = this.hooks.jobSettled ? ran.finally(() => this.hooks.jobSettled(pack.id)) : ran;
        // A throw in the bookkeeping fails the pull too: a job must never settle unheard.
        const job = held.then((r) => {
            this.files += r.files;
            this.bytes += r.bytes;
            pack.running--;
            this.onActivity();
            this.pump(pack);
        }).catch((err) => this.fail(err));
        const tracked = job.finally(() => {
            this.jobs.delete(tracked);
            pack.jobs.delete(tracked);
            this.checkDone();
        });
        this.jobs.add(tracked);
        pack.jobs.add(tracked);
    }
    /** Drop a pack: written out, or not needed after all (then its download is stopped). */
    release(pack, abort) {
        if (!this.packs.delete(pack.id))
            return;
        if (abort) {
            this.dropped.add(pack.id);
            pack.response?.destroy();
        }
        if (pack.file)
            void fsp.rm(pack.file, { force: true });
        this.ahead--;
        this.startDownloads();
        this.checkDone();
    }
    checkDone() {
        if (this.planned && !this.failure && this.packs.size === 0 && this.queue.length === 0 && this.jobs.size === 0 && this.active === 0)
            this.settle?.resolve();
    }
    /**
     * Stop: no more downloads or jobs start. `done` rejects once the running jobs have settled
     * (so nothing writes behind the error), or at once when `immediate` (the caller stops the
     * workers itself: a stall must not wait for a job that may never end).
     */
    fail(err, immediate = false) {
        if (this.failure) {
            if (immediate)
                this.settle?.reject(this.failure);
            return;
        }
        this.failure = err;
        this.queue.length = 0;
        for (const pack of this.packs.values())
            pack.response?.destroy();
        if (immediate)
            this.settle?.reject(err);
        else
            void Promise.allSettled([...this.jobs]).then(() => this.settle?.reject(err));
    }
    /** Stop everything (after a failure elsewhere, a stop or a stall). */
    abort(err, immediate = false) {
        this.fail(err, immediate);
    }
}
/** Paths a pulled snapshot may hold: CAIRN_MAX_SNAPSHOT_PATHS, else the server's default limit. */
export function clientMaxSnapshotPaths() {
    const raw = process.env.CAIRN_MAX_SNAPSHOT_PATHS;
    if (raw === undefined || raw === '')
        return DEFAULT_MAX_SNAPSHOT_PATHS;
    const n = Number(raw);
    if (!/^[1-9][0-9]*$/.test(raw) || n > MAX_SNAPSHOT_PATHS_BOUND)
        throw new Error(`CAIRN_MAX_SNAPSHOT_PATHS must be an integer from 1 to ${MAX_SNAPSHOT_PATHS_BOUND}`);
    return n;
}
export async function pull(o) {
    // One signal stops every request and the intake: the caller's (a runner stopping), or the
    // stall watch when neither bytes nor written files have come for the bound.
    const stallSeconds = o.stallSeconds ?? stallSecondsFromEnv();
    const stop = new AbortController();
    setMaxListeners(Infinity, stop.signal); // one listener per request in flight (tree packs are asked for at once)
    let phase = 'waiting for the snapshot and its manifest';
    let intake = null;
    const watch = new StallWatch(stallSeconds * 1000, () => stop.abort(new StalledError(`pull made no progress for ${stallSeconds} s (${intake && phase === 'objects' ? intake.describe() : phase}); stopped (--stall-seconds or CAIRN_STALL_SECONDS sets this bound)`)));
    const activity = () => {
        watch.touch();
        o.onActivity?.();
    };
    const passOn = () => stop.abort(o.signal.reason);
    if (o.signal?.aborted)
        passOn();
    else
        o.signal?.addEventListener('abort', passOn, { once: true });
    stop.signal.addEventListener('abort', () => intake?.abort(stop.signal.reason, true), { once: true });
    try {
        return await pullWith(o, new CairnClient(o.server, undefined, { signal: stop.signal, onData: activity }), stop.signal, activity, (p) => { phase = p; }, (i) => { intake = i; });
    }
    finally {
        watch.stop();
        o.signal?.removeEventListener('abort', passOn);
    }
}
async function pullWith(o, client, stopped, activity, setPhase, setIntake) {
    const t = timer();
    // The worker boots while the manifest travels; the main thread downloads, and it and the
    // worker decode and write (see MaterializePool). (Two lanes were once slower than one: that was
    // ext4 scanning past recently freed inodes on every create, slow for any writer; on a clean
    // directory two lanes pull the benchmark tree faster.)
    const pool = new MaterializePool(Number(process.env.CAIRN_PULL_WORKERS) || 2);
    const temp = mkdtempSync(path.join(os.tmpdir(), 'cairn-pull-'));
    let intake = null;
    try {
        if (stopped.aborted)
            throw stopped.reason;
        const [, id] = await Promise.all([client.requireRepository(o.repo), resolveSnapshot(client, o.repo, o.line, o.snapshot)]);
        let manifest;
        try {
            t('repo+line');
            manifest = await client.json('GET', client.repoPath(o.repo, `${SYNC}/import-manifests/${id}`));
        }
        catch (err) {
            if (err instanceof ServerError && err.status === 404)
                throw new Error(`snapshot ${id} is not present in repository ${o.repo} on ${client.base}`);
            throw err;
        }
        t('manifest');
        const root = manifest.snapshots.find((s) => s.snapshot_id === id)?.root_tree_id;
        if (!root)
            throw new Error(`import manifest does not describe snapshot ${id}`);
        const trees = new Map(manifest.tree_locators.map((l) => [l.tree_id, l]));
        const blobs = new Map(manifest.blob_locators.map((l) => [l.blob_id, l]));
        const packSize = new Map(manifest.object_packs.map((p) => [p.pack_id, p.byte_length ?? Infinity]));
        // Tree packs are asked for first (they are small, and nothing is written before they are
        // read). Object packs start downloading right behind them, while the trees are read: a
        // manifest of one snapshot needs every pack it lists; with history, the first packs (the
        // head's objects come first) are fetched on speculation and dropped if the trees do not need them.
        const treePacks = new Map();
        const treesArrived = Promise.all([...new Set([...trees.values()].map((l) => l.pack_id))].map(async (packId) => {
            treePacks.set(packId, await client.downloadBuffer(client.repoPath(o.repo, `${SYNC}/${PACK_PATH[PACK_KIND_TREE]}/${packId}`)));
        }));
        treesArrived.catch(() => undefined); // awaited below
        const progress = asProgress(o.progress ?? false);
        const speculative = (manifest.snapshots.length === 1 ? [...packSize.keys()] : [...packSize.keys()].slice(0, 1));
        intake = new PackIntake(client, o.repo, temp, pool, o.out, speculative, packSize, (n) => progress.increment(n), activity, o.hooks);
        setIntake(intake);
        setPhase('waiting for the tree packs');
        await treesArrived;
        t('tree packs');
        const readTree = (treeId) => {
            const loc = trees.get(treeId);
            if (!loc)
                throw new Error(`manifest lacks tree ${treeId}`);
            const pack = treePacks.get(loc.pack_id);
            if (loc.offset + loc.length > pack.length)
                throw new Error(`tree ${treeId} lies outside tree pack ${loc.pack_id}`);
            return decodeTree(decodeObjectFrame({ id: treeId, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: Number.parseInt(loc.crc32, 16) }, pack.subarray(loc.offset, loc.offset + loc.length), 'tree'));
        };
        // The size of the expansion first, from the distinct trees (docs/operations.md "Tree
        // expansion"): a snapshot over the limit is refused before a path is listed, whatever the server.
        const limit = clientMaxSnapshotPaths();
        const sizes = new Map();
        const paths = pathsOf(await expandedSize(root, readTree, (t) => sizes.get(t), (t, n) => sizes.set(t, n)));
        if (paths > limit)
            throw new Error(`${describeOverLimit(`snapshot ${id}`, paths, limit)}; nothing was written to ${o.out} (CAIRN_MAX_SNAPSHOT_PATHS raises the limit)`);
        t('size');
        // The snapshot's directories, and per object pack the objects to decode with their paths.
        const dirs = [];
        const byPack = new Map();
        let totalBytes = 0;
        const refused = [];
        const list = (treeId, rel) => {
            for (const e of readTree(treeId)) {
                const p = rel ? `${rel}/${e.name}` : e.name;
                // Whatever the server sent: a name a checkout must not write is refused, not entered.
                const rule = refusedEntryName(e.name, rel === '');
                if (rule) {
                    refused.push({ path: p, rule });
                    continue;
                }
                if (e.kind === 'directory') {
                    dirs.push(p);
                    list(e.id, p);
                    continue;
                }
                const loc = blobs.get(e.id);
                if (!loc)
                    throw new Error(`manifest lacks blob ${e.id}`);
                let objects = byPack.get(loc.pack_id);
                if (!objects)
                    byPack.set(loc.pack_id, (objects = new Map()));
                let entry = objects.get(e.id);
                if (!entry) {
                    entry = { id: e.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: Number.parseInt(loc.crc32, 16), targets: [] };
                    objects.set(e.id, entry);
                }
                entry.targets.push({ path: p, kind: e.kind });
                totalBytes += loc.raw_length;
            }
        };
        list(root, '');
        t('list');
        if (refused.length)
            throw new RefusedNamesError(refused, `snapshot ${id} holds ${refused.length} name(s) a checkout must not write; nothing was written to ${o.out}`);
        prepareOutput(o.out, dirs);
        t('trees');
        progress.start('pull', totalBytes);
        setPhase('objects');
        activity();
        try {
            intake.plan(new Map([...byPack].map(([packId, objects]) => [packId, [...objects.values()]])));
            await intake.done;
        }
        finally {
            progress.stop();
        }
        t('download+materialize');
        return { snapshot_id: id, files: intake.files, bytes: intake.bytes };
    }
    catch (err) {
        // Stopped or stalled: the workers are stopped below rather than waited for.
        intake?.abort(err, stopped.aborted);
        await intake?.done.catch(() => undefined);
        throw stopped.aborted ? stopped.reason : err;
    }
    finally {
        await pool.close();
        await fsp.rm(temp, { recursive: true, force: true });
    }
}
export async function sync(o) {
    const source = new CairnClient(o.from);
    const dest = new CairnClient(o.to);
    const destLine = o.line ? await dest.jsonOrNull('GET', dest.repoPath(o.toRepo, `/lines/${encodeURIComponent(o.line)}`)) : null;
    const destHead = destLine?.head_snapshot_id ?? null;
    // The destination's line head is what it already has; the manifest stops there.
    const haves = [];
    if (destHead) {
        const known = await source.json('POST', source.repoPath(o.fromRepo, '/snapshots:exists'), { snapshot_ids: [destHead] });
        if (known.present_snapshot_ids.includes(destHead))
            haves.push(destHead);
    }
    const manifest = await source.json('POST', source.repoPath(o.fromRepo, `${SYNC}/pull-manifests`), {
        contract: 'svc.remote_sync.zstd_bulk.pull_manifest.request.v1',
        head_snapshot_id: o.snapshot,
        have_snapshot_ids: haves,
    });
    const plan = await dest.json('POST', dest.repoPath(o.toRepo, `${SYNC}/plan`), {
        snapshot_ids: manifest.snapshots.map((s) => s.snapshot_id),
        object_packs: manifest.object_packs,
        tree_packs: manifest.tree_packs,
    });
    const temp = mkdtempSync(path.join(os.tmpdir(), 'cairn-sync-'));
    let transferred = 0;
    try {
        for (const [kind, ids] of [[PACK_KIND_OBJECT, plan.missing_object_pack_ids], [PACK_KIND_TREE, plan.missing_tree_pack_ids]]) {
            for (const packId of ids) {
                const file = path.join(temp, `${packId}.pack`);
                await source.download(source.repoPath(o.fromRepo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), file);
                await dest.putFile(dest.repoPath(o.toRepo, `${SYNC}/${PACK_PATH[kind]}/${packId}`), MEDIA[kind], file);
                transferred++;
                await fsp.rm(file);
            }
        }
    }
    finally {
        await fsp.rm(temp, { recursive: true, force: true });
    }
    const commit = await dest.json('POST', dest.repoPath(o.toRepo, `${SYNC}/commit`), {
        contract: 'svc.remote_sync.zstd_bulk.commit.v1',
        object_packs: manifest.object_packs,
        tree_packs: manifest.tree_packs,
        blob_locators: manifest.blob_locators,
        tree_locators: manifest.tree_locators,
        snapshots: manifest.snapshots,
        line_update: o.line ? { line_name: o.line, head_snapshot_id: o.snapshot, expected_head_snapshot_id: destHead } : null,
    });
    return { snapshot_id: o.snapshot, transferred_packs: transferred, upserted: commit.upserted, skipped: commit.skipped, line_updated: commit.line_head_updated_after_ingest };
}
//# sourceMappingURL=transfer.js.map