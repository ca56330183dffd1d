// Continuous shipping of every authority to the archive (storage-layout.md §20): beside the
// commits, never in their path. Per repository, after commits (a batch per interval), in this
// order: the packs the archive lacks (content-addressed: skipped when present), the new byte
// ranges of every log, the other files the commit point names (index segments, lines,
// authority.bin, the registry record, workflow.ckpt at a base), and last ONE manifest naming
// everything a restore of that commit point needs. A failing or slow store delays shipping
// only: errors are retried with backoff and the shipper catches up. After a restart the
// newest own manifest says what the archive holds.
//
// The shipper knows nothing of the data directory: a ShipSource (lib/authority/archiving.ts)
// captures commit points with open read handles (the store's capture API).
import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import { decodeManifest, encodeManifest, fileKey, logRangeKey, manifestKey, manifestPrefix, packKey, parseManifestKey, purgedMarkerKey, registryRecordKey, REGISTRY_RECORD_PATH, } from '../domain/archive-manifest.js';
import { sha256Hex } from './object-store.js';
/** Objects up to this size are read whole; larger ones stream twice (hash, then upload). */
const WHOLE = 8 * 1024 * 1024;
/** Packs opened and shipped per round of one repository, at most. */
export const PACKS_PER_ROUND = 256;
export class FencedError extends Error {
}
export class Shipper {
    o;
    repos = new Map();
    intervalMs;
    checkpointRanges;
    lagWarnSeconds;
    timer = null;
    running = null;
    stopped = false;
    fenced = null;
    /** Purged repositories whose marker is known to be stored (or that have no archive). */
    purgeNoted = new Set();
    fencedWhy = '';
    busy = false;
    failures = 0;
    lastError = null;
    lastShippedAt = null;
    wake = null;
    constructor(o) {
        this.o = o;
        this.intervalMs = o.intervalMs ?? 1000;
        this.checkpointRanges = o.checkpointRanges ?? 256;
        this.lagWarnSeconds = o.lagWarnSeconds ?? 60;
    }
    start() {
        if (this.running)
            return;
        this.running = this.loop();
    }
    /** Stop after the repository being shipped (never in the middle of an object). */
    async stop() {
        this.stopped = true;
        this.wake?.();
        await this.running;
    }
    /** Stop for good: generation `newer` was claimed, or (`why` given) the lease was lost. */
    fence(newer, why) {
        if (this.fenced)
            return;
        this.fenced = newer;
        this.fencedWhy = why ?? `fenced: generation ${newer} was claimed after ${this.o.generation}`;
        this.o.log.error({ archive: this.o.url, generation: this.o.generation.toString(), newer }, 'archive: a newer writer holds the archive; shipping stopped');
        this.o.onFenced?.({ generation: this.o.generation.toString(), newer });
        this.wake?.();
    }
    status() {
        const now = Date.now();
        const repositories = [...this.repos.entries()].sort((a, b) => a[0] - b[0]).map(([index, r]) => {
            const committed = this.o.source.committed(index);
            return {
                repository: index,
                shipped_commit: r.shipped.toString(),
                committed: String(Math.max(committed, Number(r.shipped))),
                lag_seconds: r.behindSince === null || BigInt(committed) <= r.shipped ? 0 : Math.round((now - r.behindSince) / 100) / 10,
                lag_bytes: BigInt(committed) <= r.shipped ? 0 : r.lagBytes,
            };
        });
        let state = this.fenced ? 'fenced' : this.failures > 0 ? 'error' : this.busy ? 'shipping' : 'idle';
        if (state === 'idle' && repositories.some((r) => r.lag_seconds > 0))
            state = 'shipping';
        return {
            url: this.o.url,
            generation: this.o.generation.toString(),
            state,
            repositories,
            last_error: this.fenced ? this.fencedWhy : this.lastError,
            last_shipped_at: this.lastShippedAt ? this.lastShippedAt.toISOString() : null,
        };
    }
    /** Ship every repository that is behind, once (tests call it; the loop calls it each interval). */
    async shipOnce() {
        let failed;
        for (const index of this.o.source.repositories()) {
            if (this.stopped || this.fenced)
                return;
            const r = this.repoState(index);
            const committed = BigInt(this.o.source.committed(index));
            try {
                if (!r.loaded)
                    await this.loadNewest(index, r);
                if (committed <= r.shipped) {
                    r.behindSince = null;
                    r.lagWarned = false;
                    continue;
                }
                r.behindSince ??= Date.now();
                this.checkLag(index, r);
                this.busy = true;
                await this.shipRepository(index, r);
            }
            catch (err) {
                // One repository's failure does not hold the others back; the round reports it.
                if (err instanceof FencedError)
                    throw err;
                failed ??= err;
            }
            finally {
                this.busy = false;
            }
        }
        for (const index of [...this.repos.keys()])
            if (!this.o.source.repositories().includes(index))
                this.repos.delete(index);
        for (const index of this.o.source.purged?.() ?? []) {
            if (this.stopped || this.fenced || this.purgeNoted.has(index))
                continue;
            try {
                await this.notePurge(index);
            }
            catch (err) {
                failed ??= err;
            }
        }
        if (failed)
            throw failed;
    }
    /**
     * Leave the purge marker of a purged repository that has an archive (once; HEAD first, so a
     * restart costs one request per purged repository). Its manifests then follow the retention
     * windows like any other: the newest is no longer kept for being newest.
     */
    async notePurge(index) {
        const key = purgedMarkerKey(index);
        if (!(await this.o.store.head(key))) {
            const shipped = await this.o.store.list(manifestPrefix(index), { limit: 1 });
            if (shipped.objects.length > 0) {
                const body = Buffer.from(`${JSON.stringify({ repository_index: index, purged_seen_at: new Date().toISOString(), generation: this.o.generation.toString() })}\n`);
                await this.o.store.put(key, body, { sha256: sha256Hex(body), size: body.length });
                this.o.log.info({ archive: this.o.url, repository_index: index }, 'archive: marked a purged repository; its manifests now follow the retention windows');
            }
        }
        this.purgeNoted.add(index);
    }
    repoState(index) {
        let r = this.repos.get(index);
        if (!r) {
            r = { shipped: 0n, loaded: false, packs: new Map(), logs: new Map(), files: new Map(), behindSince: null, lagBytes: 0, lagWarned: false, lastError: null };
            this.repos.set(index, r);
        }
        return r;
    }
    checkLag(index, r) {
        if (r.behindSince === null || r.lagWarned)
            return;
        const lag = (Date.now() - r.behindSince) / 1000;
        if (lag < this.lagWarnSeconds)
            return;
        r.lagWarned = true;
        this.o.log.warn({ archive: this.o.url, repository_index: index, lag_seconds: Math.round(lag) }, 'archive: shipping lags behind the commits');
        this.o.onLagging?.({ repository: index, lag_seconds: Math.round(lag) });
    }
    async loop() {
        while (!this.stopped && !this.fenced) {
            try {
                await this.shipOnce();
                if (this.failures)
                    this.o.log.info({ archive: this.o.url }, 'archive: shipping caught up after errors');
                this.failures = 0;
                this.lastError = null;
            }
            catch (err) {
                if (err instanceof FencedError)
                    break;
                this.failures++;
                this.lastError = err.message;
                // Once per error streak at warn, then quietly (an outage would flood the log).
                if (this.failures === 1 || this.failures % 30 === 0)
                    this.o.log.warn({ archive: this.o.url, problem: this.lastError, failures: this.failures }, 'archive: shipping failed; retrying');
            }
            for (const [index, r] of this.repos)
                this.checkLag(index, r);
            const delay = this.failures ? Math.min(this.intervalMs * 2 ** Math.min(this.failures, 6), 30_000) : this.intervalMs;
            await new Promise((resolve) => {
                this.wake = resolve;
                this.timer = setTimeout(resolve, delay);
                this.timer.unref();
            });
            this.wake = null;
        }
    }
    /** What the archive holds of this generation: the newest own manifest (listing finds it). */
    async loadNewest(index, r) {
        const prefix = manifestPrefix(index);
        const own = `${prefix}g${this.o.generation.toString().padStart(20, '0')}-`;
        let newest = null;
        let after = own;
        for (;;) {
            const page = await this.o.store.list(own, after ? { after } : {});
            for (const o of page.objects)
                if (parseManifestKey(o.key)?.archiveGeneration === this.o.generation)
                    newest = o.key;
            if (!page.next)
                break;
            after = page.next;
        }
        if (newest) {
            const got = await this.o.store.get(newest);
            const m = decodeManifest(await buffer(got.body), newest);
            r.shipped = m.commitGeneration;
            for (const e of m.entries)
                this.remember(r, e);
        }
        r.loaded = true;
    }
    remember(r, e) {
        if (e.kind === 'pack')
            r.packs.set(e.key, e);
        else if (e.kind === 'registry')
            r.registry = e;
        else if (e.kind === 'log-range') {
            const name = logNameOf(e.path);
            let l = r.logs.get(name);
            if (!l)
                r.logs.set(name, (l = { file: e.path, end: 0n, entries: [], rangesSinceBase: 0 }));
            l.entries.push(e);
            if (e.offset > 0n)
                l.rangesSinceBase++;
            if (e.offset + e.size > l.end)
                l.end = e.offset + e.size;
        }
        else if (e.path === 'authority.bin')
            r.identity = e;
        else if (e.path === 'workflow.ckpt')
            r.checkpoint = e;
        else
            r.files.set(e.path, e);
    }
    async shipRepository(index, r) {
        const gen = this.o.generation;
        const needsBase = (file, log) => {
            const l = r.logs.get(log);
            return !l || l.file !== file || l.rangesSinceBase >= this.checkpointRanges;
        };
        // Decide what to open before the capture: packs not known, files not shipped.
        // At most PACKS_PER_ROUND packs are opened per round (file descriptors are finite): a
        // repository with more new packs ships them over several rounds, its manifest after the last.
        let wanted = 0;
        const capture = await this.o.source.capture(index, {
            pack: (dir, id) => !r.packs.has(packKey(index, dir, id)) && wanted++ < (this.o.packsPerRound ?? PACKS_PER_ROUND),
            checkpoint: true,
            file: (p) => !r.files.has(p),
        });
        try {
            const commit = BigInt(capture.state.generation);
            if (commit <= r.shipped)
                return;
            const pending = [];
            // The lag in bytes, known before any upload: new log bytes and packs the archive may lack.
            r.lagBytes = capture.files.reduce((n, f) => {
                if (f.kind === 'pack')
                    return n + f.size;
                if (f.kind !== 'log')
                    return n;
                const prev = r.logs.get(f.log);
                return n + Math.max(0, f.size - (prev && prev.file === f.path ? Number(prev.end) : 0));
            }, 0);
            // 1. Packs the archive lacks.
            for (const f of capture.files.filter((x) => x.kind === 'pack')) {
                const key = packKey(index, f.packDir, f.packId);
                const { sha256, bytes } = await digest(f.handle, 0, f.size);
                const entry = { kind: 'pack', key, path: f.path, offset: 0n, size: BigInt(f.size), sha256 };
                const there = await this.o.store.head(key);
                if (!(there && there.size === f.size && there.sha256 === sha256))
                    await this.put(key, f.handle, 0, f.size, sha256, bytes);
                r.packs.set(key, entry);
            }
            if (capture.packs.some((p) => !r.packs.has(packKey(index, p.dir, p.id))))
                return; // more packs next round
            this.o.crashPoint?.('archive:after-packs');
            // 2. Log ranges [shipped, committed) per log; a base [0, committed) when due.
            const logs = new Map();
            let anyBase = false;
            for (const f of capture.files.filter((x) => x.kind === 'log')) {
                const name = f.log;
                const prev = r.logs.get(name);
                const base = needsBase(f.path, name) || (prev !== undefined && BigInt(f.size) < prev.end);
                const start = base ? 0n : prev.end;
                const end = BigInt(f.size);
                const l = base ? { file: f.path, end: 0n, entries: [], rangesSinceBase: 0 } : { ...prev, entries: [...prev.entries] };
                if (base)
                    anyBase = true;
                if (end > start) {
                    const key = logRangeKey(index, gen, f.path, start, end);
                    const { sha256, bytes } = await digest(f.handle, Number(start), Number(end - start));
                    await this.put(key, f.handle, Number(start), Number(end - start), sha256, bytes);
                    l.entries.push({ kind: 'log-range', key, path: f.path, offset: start, size: end - start, sha256 });
                    if (!base)
                        l.rangesSinceBase++;
                    l.end = end;
                }
                logs.set(name, l);
            }
            this.o.crashPoint?.('archive:after-logs');
            // 3. Files: index segments and lines (immutable names), authority.bin, the registry record, workflow.ckpt at a base.
            const files = new Map();
            for (const f of capture.files.filter((x) => x.kind === 'index' || x.kind === 'lines')) {
                const entry = await this.shipFile(fileKey(index, gen, commit, f.path), f);
                files.set(f.path, entry);
            }
            const named = namedFiles(capture.state);
            for (const p of named) {
                const known = files.get(p) ?? r.files.get(p);
                if (!known)
                    throw new Error(`repository ${index}: ${p} is named by commit ${commit} but was not captured`);
                files.set(p, known);
            }
            let identity = r.identity;
            const idFile = capture.files.find((x) => x.kind === 'identity');
            {
                const { sha256, bytes } = await digest(idFile.handle, 0, idFile.size);
                if (!identity || identity.sha256 !== sha256) {
                    const key = fileKey(index, gen, commit, idFile.path);
                    await this.put(key, idFile.handle, 0, idFile.size, sha256, bytes);
                    identity = { kind: 'file', key, path: idFile.path, offset: 0n, size: BigInt(idFile.size), sha256 };
                }
            }
            let registry = r.registry;
            const record = this.o.source.registryRecord(index);
            const recordSha = sha256Hex(record);
            if (!registry || registry.sha256 !== recordSha) {
                const key = registryRecordKey(index, gen, commit);
                await this.o.store.put(key, record, { sha256: recordSha, size: record.length });
                registry = { kind: 'registry', key, path: REGISTRY_RECORD_PATH, offset: 0n, size: BigInt(record.length), sha256: recordSha };
            }
            let checkpoint = r.checkpoint;
            const ckpt = capture.files.find((x) => x.kind === 'checkpoint');
            if (!ckpt)
                checkpoint = undefined;
            else if (anyBase || !checkpoint) {
                const entry = await this.shipFile(fileKey(index, gen, commit, ckpt.path), ckpt);
                checkpoint = entry;
            }
            // 4. The manifest, last.
            const packs = new Map();
            for (const p of capture.packs) {
                const key = packKey(index, p.dir, p.id);
                const e = r.packs.get(key);
                if (!e)
                    throw new Error(`repository ${index}: pack ${p.id} is named by commit ${commit} but was not shipped`);
                packs.set(key, e);
            }
            for (const [, l] of logs)
                pending.push(...l.entries);
            pending.push(...packs.values(), ...files.values(), identity, registry);
            if (checkpoint)
                pending.push(checkpoint);
            pending.sort((a, b) => Buffer.compare(Buffer.from(a.key, 'utf8'), Buffer.from(b.key, 'utf8')));
            const bytes = encodeManifest({ archiveGeneration: gen, repository: index, commitGeneration: commit, capturedAtUs: capture.capturedAtUs, commitPoint: capture.record, entries: pending });
            this.o.crashPoint?.('archive:before-manifest');
            await this.o.beforeManifest?.();
            if (this.fenced)
                throw new FencedError('fenced');
            const key = manifestKey(index, gen, commit);
            const options = { sha256: sha256Hex(bytes), size: bytes.length };
            if (this.o.conditional) {
                const outcome = await this.o.store.putIfAbsent(key, bytes, options);
                // Already there: written before a restart whose listing did not show it yet (listings may
                // lag). That manifest is whole and names only stored objects; it stands.
                if (outcome === 'exists')
                    this.o.log.info({ archive: this.o.url, manifest: key }, 'archive: the manifest of this commit point was already shipped');
            }
            else if (!(await this.o.store.head(key))) {
                await this.o.store.put(key, bytes, options);
            }
            // Shipped: remember what this manifest names.
            r.shipped = commit;
            r.logs = logs;
            r.files = new Map([...files.entries()]);
            r.identity = identity;
            r.registry = registry;
            r.checkpoint = checkpoint;
            for (const k of [...r.packs.keys()])
                if (!packs.has(k))
                    r.packs.delete(k);
            this.lastShippedAt = new Date();
            if (BigInt(this.o.source.committed(index)) <= commit) {
                r.behindSince = null;
                r.lagWarned = false;
                r.lagBytes = 0;
            }
            else
                r.behindSince = Date.now();
        }
        finally {
            await capture.close();
        }
    }
    async shipFile(key, f) {
        const { sha256, bytes } = await digest(f.handle, 0, f.size);
        await this.put(key, f.handle, 0, f.size, sha256, bytes);
        return { kind: 'file', key, path: f.path, offset: 0n, size: BigInt(f.size), sha256 };
    }
    async put(key, handle, start, size, sha256, bytes) {
        const body = bytes ?? (() => handle.createReadStream({ start, end: start + size - 1, autoClose: false, highWaterMark: 1024 * 1024 }));
        await this.o.store.put(key, size === 0 ? Buffer.alloc(0) : body, { sha256, size });
    }
}
/** The log a log file belongs to: `workflow.3.log` → `workflow`. */
function logNameOf(file) {
    return /^([a-z-]+)(?:\.\d+)?\.log$/.exec(file)?.[1] ?? file;
}
/** Index segment and lines paths a commit point names (below the authority directory). */
function namedFiles(state) {
    const out = [];
    for (const [name, segs] of Object.entries(state.segments))
        for (const seg of segs)
            out.push(`index/${name}.${seg}.idx`);
    if (state.lines_gen)
        out.push(`lines.${state.lines_gen}.bin`);
    return out;
}
/** sha256 of bytes [start, start+size) of a file; the bytes too when small (read once). */
async function digest(handle, start, size) {
    if (size <= WHOLE) {
        const bytes = Buffer.alloc(size);
        let at = 0;
        while (at < size) {
            const { bytesRead } = await handle.read(bytes, at, size - at, start + at);
            if (bytesRead === 0)
                throw new Error(`short read at ${start + at}`);
            at += bytesRead;
        }
        return { sha256: sha256Hex(bytes), bytes };
    }
    const hash = createHash('sha256');
    const chunk = Buffer.alloc(1024 * 1024);
    let at = 0;
    while (at < size) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - at), start + at);
        if (bytesRead === 0)
            throw new Error(`short read at ${start + at}`);
        hash.update(chunk.subarray(0, bytesRead));
        at += bytesRead;
    }
    return { sha256: hash.digest('hex'), bytes: null };
}
//# sourceMappingURL=shipper.js.map