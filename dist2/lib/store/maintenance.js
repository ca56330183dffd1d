// Maintenance of the published files: background merges of index segments, compaction of logs,
// and the rebuild of the locator indexes from pack headers (fsck --rebuild-locators). Each
// rewrites files into equivalent ones and publishes them with a commit of its own through the
// commit queue's barrier; none changes what the store holds. It changes when the merge policy
// or a compaction rule changes, never when the commit pipeline or the read paths do.
import { promises as fsp } from 'node:fs';
import { decodeEvent } from './event-log.js';
import { crashPoint, faults } from './crash-point.js';
import { removeDurable, writeFileDurable } from './durable.js';
import { LogFile } from './framed-log.js';
import { WorkflowCompactionFile } from './workflow-compaction.js';
import { writeMergedSegments, writeSegment } from './index-file.js';
import { INDEX_NAMES, LOG_MAGIC } from './layout.js';
import { INDEX_KIND, locatorIndexOf, PACK_DIR, PACK_KINDS, readPackHeader, sameList } from './published.js';
/** A background merge starts when an index has more segments than this. */
export const MERGE_SEGMENTS_AT = 8;
export class StoreMaintenance {
    published;
    commits;
    events;
    isMerging = false;
    mergeBackoffMs = 0;
    /** The running compaction of workflow.log (at most one). */
    compaction = null;
    compactBackoffMs = 0;
    compactNotBefore = 0;
    frozen;
    /** Test hook: awaited before a workflow.log compaction's snapshot and before its tail copy (commits go on meanwhile). */
    compactionPause = null;
    constructor(published, commits, events, frozen = false) {
        this.published = published;
        this.commits = commits;
        this.events = events;
        this.frozen = frozen;
    }
    /** A background merge or compaction is running (the files it reads must stay open). */
    get busy() { return this.isMerging || this.compaction !== null; }
    /**
     * Start a background merge when an index has more than MERGE_SEGMENTS_AT segments: every
     * segment but the newest few is merged into one new file while commits go on (the files are
     * immutable), then a barrier transaction swaps the list. Bases grow geometrically, so each
     * entry is rewritten O(log n) times in all and a small commit never pays for a big rewrite.
     */
    maybeMerge() {
        if (this.isMerging || this.commits.closed || this.commits.failed)
            return;
        const name = INDEX_NAMES.find((n) => this.published.state.segments[n].length > MERGE_SEGMENTS_AT);
        if (!name)
            return;
        this.isMerging = true;
        this.mergeSegments(name).then(() => {
            this.mergeBackoffMs = 0;
            return 0;
        }, (err) => {
            // Retry later, backing off (each attempt costs a commit), never in a tight loop.
            this.events.backgroundError(`merging index ${name} segments failed: ${err.message}`);
            this.mergeBackoffMs = Math.min(60_000, Math.max(100, this.mergeBackoffMs * 2));
            return this.mergeBackoffMs;
        }).then((delay) => {
            this.isMerging = false;
            if (this.commits.closed) {
                this.events.stoppedForClose();
                return;
            }
            setTimeout(() => this.maybeMerge(), delay).unref();
        });
    }
    /**
     * Merge a run of the newest segments of `name` into one: older segments each larger than all
     * the segments after them together are kept (size-tiered, like an LSM tree), but at least the
     * newest two are always merged, so every merge makes progress. Each entry is rewritten
     * O(log n) times in all, and a small commit never waits for a big rewrite.
     */
    async mergeSegments(name) {
        // Choose the run and reserve the merged file's number in one barrier: every segment that
        // exists then is in the run or older, every segment committed later is numbered above it.
        const plan = await this.commits.barrier(async () => {
            this.commits.assertWritable();
            const current = this.published.segmentsOf(name);
            if (current.length < 2)
                return null;
            let start = 0;
            let after = current.reduce((n, seg) => n + seg.reader.count, 0);
            while (start < current.length - 2) {
                after -= current[start].reader.count;
                if (current[start].reader.count <= after)
                    break;
                start++;
            }
            const next = this.commits.nextState();
            await this.commits.writePoint(next);
            this.published.install(next);
            return { chosen: current.slice(start), mergedSeg: next.generation };
        });
        if (!plan)
            return;
        const { chosen, mergedSeg } = plan;
        const file = this.published.layout.indexSegment(name, mergedSeg);
        try {
            await writeMergedSegments(file, INDEX_KIND[name], chosen.map((seg) => seg.reader));
        }
        catch (err) {
            await fsp.rm(file, { force: true });
            throw err;
        }
        const dropped = chosen.map((seg) => seg.segment);
        let attempted = false;
        try {
            await this.commits.barrier(async () => {
                this.commits.assertWritable();
                const list = this.published.state.segments[name];
                const at = list.indexOf(dropped[0]);
                if (at < 0 || !sameList(list.slice(at, at + dropped.length), dropped))
                    throw new Error('segments changed during the merge');
                const next = this.commits.nextState();
                next.segments[name] = [...list.slice(0, at), mergedSeg, ...list.slice(at + dropped.length)];
                crashPoint('merge:before-state');
                attempted = true;
                await this.commits.writePoint(next);
                this.published.install(next);
                await this.published.retireSegments(name, dropped);
            });
        }
        catch (err) {
            if (!attempted)
                await fsp.rm(file, { force: true });
            throw err;
        }
    }
    /** Wait for a running merge or compaction (tests and bench). */
    async settle() {
        const pause = () => new Promise((r) => setTimeout(r, 5));
        for (;;) {
            while (this.isMerging || this.compaction || this.commits.draining)
                await pause();
            if (this.commits.closed || this.commits.failed || !INDEX_NAMES.some((n) => this.published.state.segments[n].length > MERGE_SEGMENTS_AT))
                return;
            await pause();
        }
    }
    /**
     * Replace an opaque log with exactly `bodies` (a compaction: one record per job instead of
     * one per transition). The new file is `<name>.<G>.log`, written and synced before the commit
     * point names it, so a crash leaves the old file current; the old file is removed after.
     */
    compactLog(name, bodies) {
        return this.commits.barrier(async () => {
            this.commits.assertWritable();
            if (this.frozen)
                return;
            if (typeof bodies === 'function') {
                const chosen = bodies();
                if (!chosen)
                    return;
                bodies = chosen;
            }
            const next = this.commits.nextState();
            const file = this.published.layout.logFile(name, next.generation);
            const bytes = this.published.log(name).frame(bodies, 0);
            await writeFileDurable(file, bytes);
            const old = await this.switchLog(name, next, file, bytes.length, () => {
                if (name === 'events')
                    this.published.events.reset(next.event_count);
            });
            await removeDurable(old);
        });
    }
    /**
     * Make a rewritten log `file` (written and synced, `length` bytes) current: the commit point
     * names it, then it replaces the old file in memory (`installed` runs then). Returns the old
     * file's path, closed, for the caller to remove (recovery removes it after a crash). A failed
     * commit-point write leaves the new file in place (the slot may name it).
     */
    async switchLog(name, next, file, length, installed, crashPrefix = 'compact') {
        next.logs[name] = length;
        next.log_files[name] = next.generation;
        const fresh = LogFile.open(file, LOG_MAGIC[name], length, []);
        crashPoint(`${crashPrefix}:before-state`);
        try {
            await this.commits.writePoint(next);
        }
        catch (err) {
            fresh.close();
            throw err;
        }
        crashPoint(`${crashPrefix}:after-state`);
        const old = this.published.replaceLog(name, fresh);
        this.published.install(next);
        installed();
        old.close();
        return old.file;
    }
    /**
     * Retention of events.log: keep the newest `keep` events, drop the older ones (their sequence
     * numbers are never reused; a read from before the oldest kept one is answered as a gap).
     */
    async trimEvents(keep) {
        let dropped = 0;
        await this.compactLog('events', () => {
            const index = this.published.events;
            const kept = index.lastSeq - index.oldestSeq + 1;
            if (kept <= keep)
                return null;
            dropped = kept - keep;
            const bodies = [];
            for (const rec of this.published.logRecords('events')) {
                if (dropped > 0 && bodies.length === 0 && decodeEvent(rec.body, 'events.log').seq <= index.lastSeq - keep)
                    continue;
                bodies.push(rec.body);
            }
            return bodies;
        });
        return dropped;
    }
    /** workflow.log is due for a compaction: more than 1,024 records and more than four per live line or entity. */
    workflowDue() {
        const records = this.published.workflowRecords;
        return records > 1024 && records > 4 * this.published.liveRecordCount();
    }
    /** A compaction must stop (and never start): the store is closed, failed, or its files frozen, or a reseal runs. */
    stopCompaction() {
        return this.commits.closed || this.commits.failed !== null || this.frozen || this.resealing;
    }
    resealing = false;
    /**
     * Rewrite workflow.log with every field that storage-layout.md §17.2 seals, and that a server
     * from before sealing wrote in clear, sealed with `key`: every record is kept, in order, with
     * the same upserts; only those fields change form (so replaying the new file gives what
     * replaying the old one gives). One barrier, as a compaction's last phase: the new file is
     * written under a temp name, synced, named `workflow.<G>.log` and made current by one commit
     * point, so a crash at any step leaves either the old log current (the new file is removed
     * at open) or the new one. It runs on frozen files too (a retirement must not list a secret
     * in clear; the caller decides). Resolves with the number of upserts sealed (0: none was in
     * clear, nothing written).
     */
    async resealWorkflow(key) {
        this.resealing = true;
        try {
            // A compaction under way reads the old file outside the barrier: let it finish or stop first.
            await this.compaction?.catch(() => { });
            return await this.commits.barrier(async () => {
                this.commits.assertWritable();
                if (this.published.workflowInClear === 0)
                    return 0;
                if (faults.failReseal?.())
                    throw new Error('the reseal failed (injected by a test)');
                const log = this.published.log('workflow');
                const out = await WorkflowCompactionFile.create(log);
                out.keyId = key.id;
                let named = false;
                let replaced = null;
                try {
                    await out.writeHeader();
                    await out.copyTail(log, 0, key);
                    const next = this.commits.nextState();
                    const file = this.published.layout.logFile('workflow', next.generation);
                    await out.finish(file);
                    crashPoint('reseal:written');
                    named = true;
                    replaced = await this.switchLog('workflow', next, file, out.length, () => this.published.adoptCompactedWorkflow(out.locations, out.records, out.inClear), 'reseal');
                    return out.sealed;
                }
                finally {
                    if (!named)
                        await out.discard();
                    if (replaced)
                        await removeDurable(replaced);
                }
            });
        }
        finally {
            this.resealing = false;
        }
    }
    /** Start a background compaction of workflow.log when it is due (at most one runs; none while backing off). */
    maybeCompactWorkflow() {
        if (this.compaction || this.stopCompaction() || Date.now() < this.compactNotBefore || !this.workflowDue())
            return;
        void this.startCompaction().catch(() => { }); // reported by startCompaction
    }
    /**
     * Compact workflow.log now when it is due and wait for it (tests and bench); joins one
     * already running. Resolves with the note, or null when nothing was compacted.
     */
    compactWorkflow() {
        if (this.compaction)
            return this.compaction;
        if (this.stopCompaction() || !this.workflowDue())
            return Promise.resolve(null);
        return this.startCompaction();
    }
    startCompaction() {
        const run = (async () => {
            try {
                const note = await this.compactWorkflowPhases();
                this.compactBackoffMs = 0;
                if (note)
                    this.events.compacted(note);
                return note;
            }
            catch (err) {
                // Closing or freezing stops a compaction; that is no failure.
                if (this.commits.closed || this.frozen)
                    return null;
                this.events.backgroundError(`compacting workflow.log failed: ${err.message}`);
                // Retry later, backing off (each attempt rewrites the log), never in a tight loop.
                this.compactBackoffMs = Math.min(60_000, Math.max(100, this.compactBackoffMs * 2));
                this.compactNotBefore = Date.now() + this.compactBackoffMs;
                setTimeout(() => this.maybeCompactWorkflow(), this.compactBackoffMs).unref();
                throw err;
            }
            finally {
                this.compaction = null;
                if (this.commits.closed)
                    this.events.stoppedForClose();
            }
        })();
        this.compaction = run;
        return run;
    }
    /**
     * Compact workflow.log while commits go on, so that no commit waits for the rewrite:
     * A (a barrier) notes the committed length L; B (no barrier) writes the latest upsert of
     * every line and entity as of L from the old file, one per record (WorkflowCompactionFile);
     * C (a barrier) appends the records from L on verbatim, syncs, and makes the file current
     * with one commit point (switchLog), the entities' locations with it. The file keeps a temp
     * name until C, so a crash at any step leaves the old log current and nothing to keep.
     */
    async compactWorkflowPhases() {
        const start = await this.commits.barrier(() => (this.stopCompaction() || !this.workflowDue() ? null : this.published.workflowCompactionStart()));
        if (!start)
            return null;
        const atS = Math.floor(Date.now() / 1000);
        const out = await WorkflowCompactionFile.create(start.log);
        out.keyId = this.published.sealKey?.id ?? null;
        let named = false;
        let replaced = null;
        try {
            await this.compactionPause?.('snapshot');
            if (this.stopCompaction() || !(await out.writeSnapshot(start, atS, () => this.stopCompaction())))
                return null;
            crashPoint('compact:workflow-snapshot');
            await this.compactionPause?.('tail');
            if (this.stopCompaction())
                return null;
            return await this.commits.barrier(async () => {
                this.commits.assertWritable();
                // Frozen after phase A (a retiring repository), or the log replaced meanwhile: stop.
                if (this.frozen || this.published.state.log_files.workflow !== start.generation || this.published.log('workflow') !== start.log)
                    return null;
                const before = this.published.workflowRecords;
                await out.copyTail(start.log, start.length);
                const next = this.commits.nextState();
                const file = this.published.layout.logFile('workflow', next.generation);
                await out.finish(file);
                crashPoint('compact:workflow-written');
                named = true;
                replaced = await this.switchLog('workflow', next, file, out.length, () => this.published.adoptCompactedWorkflow(out.locations, out.records, out.inClear));
                return `workflow.log compacted from ${before} to ${out.records} records`;
            });
        }
        finally {
            // Once a commit point may name the file it stays (a failed write leaves that unknown;
            // recovery at open removes it when the commit point does not name it).
            if (!named)
                await out.discard();
            // The replaced log goes after the barrier: unlinking a large file takes a while.
            if (replaced)
                await removeDurable(replaced);
        }
    }
    /**
     * Freeze the files: no compaction rewrites a log from now on (a retiring repository's files
     * stay as exported). Resolves once a compaction that was running has finished or stopped,
     * its temp file removed.
     */
    async freezeFiles() {
        this.frozen = true;
        await this.compaction?.catch(() => { });
    }
    /** Compactions may rewrite the logs again (a retirement was aborted). */
    thawFiles() {
        this.frozen = false;
    }
    get filesFrozen() { return this.frozen; }
    /**
     * Recreate the blob and tree indexes from the headers of the committed packs alone (fsck
     * --rebuild-locators): one new segment per kind, published by a commit like any other.
     */
    async rebuildLocators() {
        return this.commits.barrier(async () => {
            const skipped = [];
            const next = this.commits.nextState();
            const gen = next.generation;
            const counts = { blobs: 0, trees: 0, skipped };
            for (const kind of PACK_KINDS) {
                const packs = (await this.published.packFiles(kind)).sort();
                const byId = new Map();
                for (const packId of packs) {
                    let header;
                    try {
                        ({ header } = await readPackHeader(this.published.packFile(kind, packId), kind));
                    }
                    catch (err) {
                        // A pack whose header is unreadable contributes no locators; fsck reports it.
                        skipped.push(`${PACK_DIR[kind]}/${packId}.pack: ${err.message}`);
                        continue;
                    }
                    for (const e of header.entries) {
                        if (!byId.has(e.id))
                            byId.set(e.id, { id: e.id, pack_id: packId, a: 0, b: e.crc32, c: e.offset, d: e.length, e: e.raw_length });
                    }
                }
                const name = locatorIndexOf(kind);
                await writeSegment(this.published.layout.indexSegment(name, gen), INDEX_KIND[name], [...byId.values()]);
                next.segments[name] = [gen];
                counts[name] = byId.size;
                this.published.setCommittedPacks(kind, packs);
            }
            await this.commits.writePoint(next);
            const prev = this.published.state;
            this.published.install(next);
            for (const name of ['blobs', 'trees'])
                await this.published.retireSegments(name, prev.segments[name]);
            return counts;
        });
    }
}
//# sourceMappingURL=maintenance.js.map