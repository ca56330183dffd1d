// The published side of one authority's store: what the current commit point (commit.bin)
// names, open for reading — the logs cut to their committed lengths, the index segments, the
// lines and workflow entities replayed from workflow.log, and the committed packs. Every read of
// committed content goes through here, so it changes when the read paths or the in-memory
// mirror change. It never writes commit.bin: the commit pipeline and index maintenance hand it
// each new state only after that state's commit point is durable (publish, install).
import { holdsClear, openRecord } from '../domain/sealing.js';
import { closeSync, openSync, readSync, promises as fsp } from 'node:fs';
import { decodeSnapshot, decodeTree } from '../domain/content.js';
import { Corrupt, Invalid, NotFound } from '../domain/errors.js';
import { crc32 } from './binary.js';
import { decodeLines } from './content-files.js';
import { exists } from './durable.js';
import { observeEventTime } from './event-clock.js';
import { EventIndex } from './event-log.js';
import { LOG_HEADER_SIZE, FRAME_OVERHEAD, LogFile } from './framed-log.js';
import { INDEX_KIND_BLOB, INDEX_KIND_SNAPSHOT, INDEX_KIND_TREE, IndexReader, SegmentedIndex } from './index-file.js';
import { INDEX_NAMES, LOG_MAGIC, LOG_NAMES } from './layout.js';
import { decodeObjectFrame, decodePackHeader, packHeaderPayloadSize, PACK_KIND_OBJECT, PACK_KIND_TREE } from './pack.js';
import { WorkflowRecords } from './workflow-records.js';
import { TreeSizes } from './tree-sizes.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS } from '../domain/tree-size.js';
import { decodeCheckpoint, encodeCheckpoint, lastRecordCrc, readCheckpointFile, SectionReader, SectionWriter } from './workflow-checkpoint.js';
import { closeSync as closeFd, fsyncSync, openSync as openFd, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { tempPathFor } from './durable.js';
export const PACK_KINDS = [PACK_KIND_OBJECT, PACK_KIND_TREE];
export const PACK_DIR = { [PACK_KIND_OBJECT]: 'objects', [PACK_KIND_TREE]: 'trees' };
export const INDEX_KIND = { blobs: INDEX_KIND_BLOB, trees: INDEX_KIND_TREE, snapshots: INDEX_KIND_SNAPSHOT };
const OBJECT_INDEX = { blob: 'blobs', tree: 'trees' };
export function packKindOf(kind) {
    return kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
}
/** The index that locates the objects of packs of `kind`. */
export function locatorIndexOf(kind) {
    return kind === PACK_KIND_OBJECT ? 'blobs' : 'trees';
}
export class PublishedStore {
    layout;
    current;
    logs = {};
    indexes = {};
    readers = new Map();
    lineMap = new Map();
    /** lineMap's values in name order, built on first read after a change (GET lines is hot). */
    sortedLines = null;
    /** Where each workflow entity's latest upsert is in workflow.log (the bodies stay on disk). */
    records = new WorkflowRecords(() => this.logs.workflow);
    committedPacks = { [PACK_KIND_OBJECT]: new Set(), [PACK_KIND_TREE]: new Set() };
    /** Records in the current workflow.log (compaction decides from it). */
    workflowRecords = 0;
    /**
     * Upserts in the current workflow.log holding a field that is sealed (storage-layout.md
     * §17.2) in clear: written by a server from before sealing. Counted as the log is replayed
     * (the checkpoint counts the records it covers); ContentStore.sealInClear brings it to 0.
     */
    workflowInClear = 0;
    /** Sections of the checkpoint this open started from, until their owners take them. */
    checkpointSections = new Map();
    /** Entities upserted in the log's tail after that checkpoint, by type (owners apply them). */
    tail = new Map();
    tracking = false;
    /** Encoders of the owners' checkpoint sections. */
    sectionEncoders = new Map();
    /** What the newest checkpoint on disk covers (null: none usable). */
    checkpointCover = null;
    /** events.log by sequence number (set by load). */
    events;
    eventListeners = new Set();
    /** Per entity type, who follows its published upserts (derived in-memory state: comments.ts). */
    upsertListeners = new Map();
    /** Expanded sizes of trees and the limit on a snapshot's paths (ContentStore sets it from its options). */
    sizes = new TreeSizes(DEFAULT_MAX_SNAPSHOT_PATHS);
    constructor(layout, state) {
        this.layout = layout;
        this.current = state;
    }
    /**
     * Open what the commit point names: every log (cutting an uncommitted tail), every index
     * segment, the lines checkpoint; then replay workflow.log. While locators are being rebuilt
     * an unreadable blob or tree segment is skipped (noted) instead of refusing to open.
     */
    async load(rebuildingLocators, notes, useCheckpoint = true) {
        const L = this.layout;
        const state = this.current;
        for (const name of LOG_NAMES)
            this.logs[name] = LogFile.open(L.logFile(name, state.log_files[name]), LOG_MAGIC[name], state.logs[name], notes);
        this.events = new EventIndex(() => this.logs.events, state.event_count);
        observeEventTime(state.last_event_at_us);
        for (const name of INDEX_NAMES) {
            const segs = [];
            for (const segment of state.segments[name]) {
                const file = L.indexSegment(name, segment);
                let reader;
                try {
                    reader = IndexReader.open(file, INDEX_KIND[name]);
                }
                catch (err) {
                    if (!(rebuildingLocators && name !== 'snapshots'))
                        throw relabel(err, L.root);
                    notes.push(`index/${name}.${segment}.idx unusable (${err.message.replace(L.root + '/', '')}); rebuilding`);
                    continue;
                }
                this.readers.set(file, reader);
                segs.push({ segment, reader });
            }
            this.indexes[name] = new SegmentedIndex(INDEX_KIND[name], segs);
        }
        if (this.indexes.snapshots.count !== state.snapshot_count)
            throw new Corrupt(`snapshot index holds ${this.indexes.snapshots.count} entries, commit.bin says ${state.snapshot_count}`);
        if (state.lines_gen) {
            for (const line of decodeLines(await fsp.readFile(L.linesFile(state.lines_gen)), `lines.${state.lines_gen}.bin`))
                this.lineMap.set(line.name, line);
            this.sortedLines = null;
        }
        const baseLines = new Map(this.lineMap);
        const cover = useCheckpoint ? this.loadCheckpoint(notes) : null;
        let workflowRecords = cover?.records ?? 0;
        this.workflowInClear = cover?.in_clear ?? 0;
        try {
            this.tracking = cover !== null;
            for (const rec of this.logs.workflow.recordsFrom(cover?.length ?? 0)) {
                this.replayWorkflow(rec);
                workflowRecords++;
            }
        }
        catch (err) {
            if (!cover)
                throw err;
            // The tail does not replay from where the checkpoint says: the log decides (from its start).
            notes.push(`workflow.ckpt does not fit workflow.log (${err.message}); the workflow indexes are rebuilt from workflow.log`);
            this.checkpointCover = null;
            this.checkpointSections.clear();
            this.tail.clear();
            this.tracking = false;
            this.lineMap = baseLines;
            this.sortedLines = null;
            this.records.reset();
            workflowRecords = 0;
            this.workflowInClear = 0;
            for (const rec of this.logs.workflow.records()) {
                this.replayWorkflow(rec);
                workflowRecords++;
            }
        }
        this.tracking = false;
        this.workflowRecords = workflowRecords;
    }
    /**
     * Read workflow.ckpt and, when it is whole and covers a prefix of the current workflow.log,
     * take its lines and entity locations. Otherwise note why and return null (the caller
     * replays the whole log). Never throws: the checkpoint is a cache of the log.
     */
    loadCheckpoint(notes) {
        const log = this.logs.workflow;
        const rebuilt = `the workflow indexes are rebuilt from workflow.log`;
        let data;
        try {
            data = readCheckpointFile(this.layout.workflowCheckpoint);
        }
        catch (err) {
            notes.push(`workflow.ckpt is unreadable (${err.message}); ${rebuilt}`);
            return null;
        }
        if (!data) {
            if (log.length > LOG_HEADER_SIZE)
                notes.push(`workflow.ckpt is missing; ${rebuilt} (a checkpoint is written)`);
            return null;
        }
        try {
            const ck = decodeCheckpoint(data);
            const c = ck.cover;
            if (c.log_file !== this.current.log_files.workflow)
                throw new Error(`it covers workflow.log generation ${c.log_file}, the commit point names ${this.current.log_files.workflow}`);
            if (c.length > log.length)
                throw new Error(`it covers ${c.length} bytes of workflow.log, the commit point commits ${log.length}`);
            if (c.length !== 0 && c.length < LOG_HEADER_SIZE)
                throw new Error(`it covers ${c.length} bytes, inside the log header`);
            if (lastRecordCrc((o, n) => log.read(o, n), c.length, LOG_HEADER_SIZE) !== c.last_crc)
                throw new Error(`workflow.log's record before byte ${c.length} is not the one it covers`);
            const section = ck.sections.get(RECORDS_SECTION);
            if (!section)
                throw new Error(`no ${RECORDS_SECTION} section`);
            const r = new SectionReader(section, RECORDS_SECTION);
            const lines = r.json();
            if (!Array.isArray(lines))
                throw new Error('lines are not a list');
            const fresh = new WorkflowRecords(() => log);
            fresh.decode(r);
            r.end();
            for (const [name, status, head, at] of lines)
                this.lineMap.set(name, { name, status, head_snapshot_id: head, updated_at_s: at });
            this.sortedLines = null;
            this.records.replace(fresh);
            ck.sections.delete(RECORDS_SECTION);
            this.checkpointSections = ck.sections;
            this.checkpointCover = c;
            return c;
        }
        catch (err) {
            notes.push(`workflow.ckpt is unusable (${err.message}); ${rebuilt}`);
            return null;
        }
    }
    // ------------------------------------------------------------ the workflow checkpoint (workflow-checkpoint.ts)
    /** An owner's section of every checkpoint written from now on (its in-memory indexes; null: none this time). */
    registerCheckpointSection(name, encode) {
        this.sectionEncoders.set(name, encode);
    }
    /** The owner's section of the checkpoint this open started from (once; undefined: none, rebuild). */
    takeCheckpointSection(name) {
        const s = this.checkpointSections.get(name);
        this.checkpointSections.delete(name);
        return s;
    }
    /** Ids of `type` upserted after the checkpoint this open started from, in first-upsert order. */
    tailEntities(type) {
        return [...(this.tail.get(type) ?? [])];
    }
    /** Forget what the open's checkpoint left (the owners have opened). */
    releaseCheckpoint() {
        this.checkpointSections.clear();
        this.tail.clear();
    }
    /** A checkpoint of the current state (call with nothing committing: a barrier, or idle). */
    encodeCheckpoint() {
        const log = this.logs.workflow;
        const cover = {
            log_file: this.current.log_files.workflow,
            length: log.length,
            last_crc: lastRecordCrc((o, n) => log.read(o, n), log.length, LOG_HEADER_SIZE),
            records: this.workflowRecords,
            in_clear: this.workflowInClear,
        };
        const lines = [...this.lineMap.values()].map((l) => [l.name, l.status, l.head_snapshot_id, l.updated_at_s]);
        const sections = new Map([[RECORDS_SECTION, Buffer.concat([new SectionWriter().json(lines).done(), this.records.encode()])]]);
        for (const [name, encode] of this.sectionEncoders) {
            const bytes = encode();
            if (bytes)
                sections.set(name, bytes);
        }
        return { bytes: encodeCheckpoint({ cover, sections }), cover };
    }
    /**
     * The checkpoint a writer would have written when workflow.log was `cover.length` long,
     * rebuilt by replaying the log up to there (fsck compares it with workflow.ckpt byte for
     * byte). `sections` builds the owners' sections from the entity locations as of that point.
     */
    async rebuildCheckpoint(cover, sections) {
        const log = this.logs.workflow;
        const lines = new Map();
        if (this.current.lines_gen)
            for (const line of decodeLines(await fsp.readFile(this.layout.linesFile(this.current.lines_gen)), `lines.${this.current.lines_gen}.bin`))
                lines.set(line.name, line);
        const records = new WorkflowRecords(() => log);
        let count = 0;
        let inClear = 0;
        for (const rec of log.records()) {
            if (rec.offset >= cover.length)
                break;
            const txn = JSON.parse(rec.body.toString('utf8'));
            txn.upserts.forEach((u, i) => {
                if (holdsClear(u.type, u.body, this.sealKey?.id ?? null))
                    inClear++;
                if (u.type === 'line') {
                    const b = u.body;
                    lines.set(u.id, { name: u.id, status: b.status, head_snapshot_id: b.head_snapshot_id, updated_at_s: b.updated_at_s });
                }
                else
                    records.set(u, rec.offset, i);
            });
            count++;
        }
        const at = { log_file: this.current.log_files.workflow, length: cover.length, last_crc: lastRecordCrc((o, n) => log.read(o, n), cover.length, LOG_HEADER_SIZE), records: count, in_clear: inClear };
        const lineRows = [...lines.values()].map((l) => [l.name, l.status, l.head_snapshot_id, l.updated_at_s]);
        const all = new Map([[RECORDS_SECTION, Buffer.concat([new SectionWriter().json(lineRows).done(), records.encode()])]]);
        for (const [name, bytes] of sections(records))
            all.set(name, bytes);
        return encodeCheckpoint({ cover: at, sections: all });
    }
    /** Write workflow.ckpt durably (temp file, fsync, rename, directory fsync), synchronously. */
    writeCheckpointSync(bytes) {
        const file = this.layout.workflowCheckpoint;
        const temp = tempPathFor(file);
        const fd = openFd(temp, 'wx', 0o644);
        try {
            let done = 0;
            while (done < bytes.length)
                done += writeSync(fd, bytes, done, bytes.length - done, done);
            fsyncSync(fd);
        }
        catch (err) {
            closeFd(fd);
            rmSync(temp, { force: true });
            throw err;
        }
        closeFd(fd);
        renameSync(temp, file);
        const dir = openFd(path.dirname(file), 'r');
        try {
            fsyncSync(dir);
        }
        finally {
            closeFd(dir);
        }
    }
    replayWorkflow(rec) {
        let txn;
        try {
            txn = JSON.parse(rec.body.toString('utf8'));
            if (!txn || !Array.isArray(txn.upserts))
                throw new Error('no upserts');
        }
        catch (err) {
            throw new Corrupt(`workflow.log: record at byte ${rec.offset} is not a transaction (${err.message})`);
        }
        txn.upserts.forEach((u, i) => {
            this.applyUpsert(u, rec.offset, i, false);
            if (holdsClear(u.type, u.body, this.sealKey?.id ?? null))
                this.workflowInClear++;
        });
        if (this.tracking) {
            for (const u of txn.upserts) {
                if (u.type === 'line')
                    continue;
                let ids = this.tail.get(u.type);
                if (!ids)
                    this.tail.set(u.type, (ids = new Set()));
                ids.add(u.id);
            }
        }
    }
    applyUpsert(u, offset, ordinal, published) {
        if (typeof u?.type !== 'string' || typeof u.id !== 'string')
            throw new Corrupt(`workflow.log: record at byte ${offset} has an upsert without type and id`);
        if (u.type === 'line') {
            const b = u.body;
            this.lineMap.set(u.id, { name: u.id, status: b.status, head_snapshot_id: b.head_snapshot_id, updated_at_s: b.updated_at_s });
            this.sortedLines = null;
            return;
        }
        if (published !== false)
            this.records.setPublished(u, offset, ordinal, published);
        else
            this.records.set(u, offset, ordinal);
    }
    /** Close every open file (the store is closed and nothing is writing). */
    close() {
        for (const fd of this.packFds.values())
            closeSync(fd);
        this.packFds.clear();
        for (const r of this.readers.values())
            r.close();
        this.readers.clear();
        for (const name of LOG_NAMES)
            this.logs[name]?.close();
    }
    // ------------------------------------------------------------ installing a durable commit
    /** The committed state itself (not a copy): callers clone it to build the next one. */
    get state() { return this.current; }
    /** The open file of a log (the commit pipeline appends at its committed length). */
    log(name) { return this.logs[name]; }
    /** Make `next`, whose commit point is durable, current: log lengths and changed segment lists. */
    install(next) {
        const prev = this.current;
        this.current = next;
        for (const name of LOG_NAMES)
            this.logs[name].length = next.logs[name];
        for (const name of INDEX_NAMES) {
            if (next.segments[name] === prev.segments[name] || sameList(next.segments[name], prev.segments[name]))
                continue;
            this.indexes[name] = this.segmentedIndex(name, next.segments[name]);
        }
    }
    /**
     * Make a durable batch visible to readers: its state, adopted packs, lines and entities.
     * `workflowBytes` are the body lengths of the batch's workflow.log records, appended in order
     * at the previous committed length (each entity's location follows from them); `inClear` of
     * their upserts hold a sealed field in clear (0 but under sealingTestHooks).
     */
    publish(next, batch, adopted, workflowBytes = [], inClear = 0) {
        let at = Math.max(this.current.logs.workflow, LOG_HEADER_SIZE);
        this.install(next);
        for (const { kind, packId } of adopted)
            this.committedPacks[kind].add(packId);
        for (const [name, line] of batch.lines)
            this.lineMap.set(name, line);
        if (batch.lines.size > 0)
            this.sortedLines = null;
        batch.workflow.forEach((t, r) => {
            const share = Math.ceil(workflowBytes[r] / Math.max(1, t.upserts.length));
            t.upserts.forEach((u, i) => {
                if (u.type !== 'line')
                    this.applyUpsert(u, at, i, share);
            });
            for (const u of t.upserts)
                for (const fn of this.upsertListeners.get(u.type) ?? [])
                    fn(u.id, u.body);
            at += workflowBytes[r] + FRAME_OVERHEAD;
        });
        this.workflowRecords += batch.workflow.length;
        this.workflowInClear += inClear;
    }
    /** The seal key (lib/domain/sealing.ts): workflow records are sealed with it as they are written, opened with it as they are read. */
    sealKey = null;
    setSealKey(key) {
        this.sealKey = key;
        this.records.open = (type, id, body) => openRecord(key, type, id, body);
    }
    /** A durable, published commit appended `events` to events.log at byte `from`. */
    indexEvents(events, from) {
        this.events.appended(events, from);
    }
    /** Tell the listeners of a published commit's events (after its publish hooks ran). */
    notifyEvents(events) {
        for (const fn of this.eventListeners) {
            try {
                fn(events);
            }
            catch {
                // A listener's failure is its own; the commit is already durable and published.
            }
        }
    }
    /** Call `fn` with each published commit's events; returns the unsubscribe function. */
    onEvents(fn) {
        this.eventListeners.add(fn);
        return () => this.eventListeners.delete(fn);
    }
    /**
     * Call `fn` with each upsert of `type` a commit publishes, in log order, as the commit becomes
     * visible (before its transactions' publish hooks), whichever module wrote it; returns the
     * unsubscribe function. A listener must not throw (the commit is already durable).
     */
    onUpsert(type, fn) {
        let set = this.upsertListeners.get(type);
        if (!set)
            this.upsertListeners.set(type, (set = new Set()));
        set.add(fn);
        return () => set.delete(fn);
    }
    /** Swap in a log file a compaction wrote; returns the replaced one (the caller closes and removes it). */
    replaceLog(name, fresh) {
        const old = this.logs[name];
        this.logs[name] = fresh;
        return old;
    }
    /** Close and remove segment files no longer named by the current state. */
    async retireSegments(name, segments) {
        for (const seg of segments) {
            const f = this.layout.indexSegment(name, seg);
            this.readers.get(f)?.close();
            this.readers.delete(f);
            await fsp.rm(f, { force: true });
        }
    }
    addCommittedPack(kind, id) {
        this.committedPacks[kind].add(id);
    }
    setCommittedPacks(kind, ids) {
        this.committedPacks[kind] = new Set(ids);
    }
    /** Pack ids the segments of `kind`'s locator index reference. */
    referencedPacks(kind) {
        return this.indexes[locatorIndexOf(kind)].packIds();
    }
    /** The segments of an index, oldest first (a merge chooses among them). */
    segmentsOf(name) {
        return this.indexes[name].segments;
    }
    /** Lines and workflow entities live now (what a compacted workflow.log must hold). */
    liveRecordCount() {
        return this.lineMap.size + this.records.liveCount();
    }
    /**
     * What a compaction of workflow.log starts from (call in a barrier): the open file, its
     * generation and committed length, the lines, and the entities whose latest upsert is before
     * that length (visited later, while commits go on).
     */
    workflowCompactionStart() {
        const log = this.logs.workflow;
        return { log, generation: this.current.log_files.workflow, length: log.length, lines: this.lines(), entities: this.records.liveBefore(log.length) };
    }
    /** A compacted (or resealed) workflow.log is current: its locations replace the old ones. */
    adoptCompactedWorkflow(locations, records, inClear) {
        this.records.replace(locations);
        this.workflowRecords = records;
        this.workflowInClear = inClear;
    }
    segmentedIndex(name, segments) {
        return new SegmentedIndex(INDEX_KIND[name], segments.map((segment) => {
            const file = this.layout.indexSegment(name, segment);
            let reader = this.readers.get(file);
            if (!reader) {
                reader = IndexReader.open(file, INDEX_KIND[name]);
                this.readers.set(file, reader);
            }
            return { segment, reader };
        }));
    }
    // ------------------------------------------------------------ paths (layout.ts names them)
    packDir(kind) { return this.layout.packDir(PACK_DIR[kind]); }
    stagingDir(kind) { return this.layout.stagingDir(PACK_DIR[kind]); }
    packFile(kind, id) { return this.layout.packFile(PACK_DIR[kind], id); }
    stagedPackFile(kind, id) { return this.layout.stagedPackFile(PACK_DIR[kind], id); }
    // ------------------------------------------------------------ published reads
    get generation() { return this.current.generation; }
    get snapshotCount() { return this.current.snapshot_count; }
    locator(kind, id) {
        const e = this.indexes[OBJECT_INDEX[kind]].lookup(id);
        return e ? toLocator(kind, e) : null;
    }
    has(kind, id) {
        return this.indexes[OBJECT_INDEX[kind]].has(id);
    }
    /** A committed tree's recorded expanded size; undefined when absent or not recorded. */
    recordedSize(treeId) {
        return this.indexes.trees.expandedOf(treeId) || undefined;
    }
    *locators(kind) {
        for (const e of this.indexes[OBJECT_INDEX[kind]].entries())
            yield toLocator(kind, e);
    }
    /** Read and verify one object through its locator. */
    async readObject(kind, id) {
        const loc = this.locator(kind, id);
        if (!loc)
            throw new NotFound(`${kind} ${id} is not present`);
        return this.readLocated(loc);
    }
    async readLocated(loc) {
        const packKind = packKindOf(loc.kind);
        // A transaction validating a commit reads new objects from their staged packs.
        const file = this.isCommittedPack(packKind, loc.pack_id) ? this.packFile(packKind, loc.pack_id) : this.stagedPackFile(packKind, loc.pack_id);
        const frame = Buffer.allocUnsafe(loc.length);
        const n = readSync(this.packFd(file), frame, 0, loc.length, loc.offset);
        const entry = { id: loc.id, offset: loc.offset, length: loc.length, raw_length: loc.raw_length, crc32: loc.crc32 };
        return decodeObjectFrame(entry, frame.subarray(0, n), loc.kind);
    }
    /**
     * Open pack files are cached (at most 64; the oldest is closed first): object reads are many
     * small positional reads, and pack files never change once written. A renamed pack keeps its
     * inode, so a cached descriptor stays valid.
     */
    packFds = new Map();
    packFd(file) {
        let fd = this.packFds.get(file);
        if (fd !== undefined) {
            this.packFds.delete(file);
            this.packFds.set(file, fd);
            return fd;
        }
        fd = openSync(file, 'r');
        this.packFds.set(file, fd);
        if (this.packFds.size > 64) {
            const [oldest, oldFd] = this.packFds.entries().next().value;
            this.packFds.delete(oldest);
            closeSync(oldFd);
        }
        return fd;
    }
    async readTree(id) {
        const raw = await this.readObject('tree', id);
        try {
            return decodeTree(raw);
        }
        catch (err) {
            throw new Corrupt(`tree ${id} is stored but does not decode: ${err.message}`);
        }
    }
    hasSnapshot(id) {
        return this.indexes.snapshots.has(id);
    }
    snapshot(id) {
        const e = this.indexes.snapshots.lookup(id);
        if (!e)
            return null;
        const canonical = this.logs.snapshots.read(e.c, e.d);
        if (crc32(canonical) !== e.b)
            throw new Corrupt(`snapshot ${id}: record CRC-32 mismatch in snapshots.log`);
        let record;
        try {
            record = decodeSnapshot(canonical);
        }
        catch (err) {
            throw new Corrupt(`snapshot ${id}: record does not decode (${err.message})`);
        }
        if (record.snapshot_id !== id)
            throw new Corrupt(`snapshot ${id}: record hashes to ${record.snapshot_id}`);
        return { ...record, snapshot_index: e.a };
    }
    *snapshotIds() {
        for (const e of this.indexes.snapshots.entries())
            yield e.id;
    }
    /**
     * Every line in name order (UTF-8 byte order). The same frozen array is returned until a line
     * changes, so callers may cache what they derive from it by identity.
     */
    lines() {
        this.sortedLines ??= Object.freeze(sortByName([...this.lineMap.values()]));
        return this.sortedLines;
    }
    line(name) {
        return this.lineMap.get(name);
    }
    /** The latest body of a workflow entity (workflow.log upserts other than lines). */
    entity(type, id) {
        return this.records.get(type, id);
    }
    /** One committed entity for a scan that yields between reads (WorkflowRecords.scanGet). */
    scanEntity(type, id) {
        return this.records.scanGet(type, id);
    }
    /**
     * Every committed entity of a workflow type, read from workflow.log one at a time (owners
     * build indexes at open): tasks, changes and lands in sequence order, other types in the
     * order of their first upsert in the current log file (a compaction may reorder them).
     */
    entitiesOf(type) {
        return this.records.entries(type);
    }
    /** The ids of every committed entity of a type, in entitiesOf's order, without reading a record. */
    *entityIds(type) {
        for (const [id] of this.records.locations(type))
            yield id;
    }
    /** Every committed record of an opaque log (jobs, plans), for its owner's replay at open. */
    logRecords(name) {
        return this.logs[name].records();
    }
    isCommittedPack(kind, id) {
        return this.committedPacks[kind].has(id);
    }
    committedPackIds(kind) {
        return [...this.committedPacks[kind]];
    }
    async isStagedPack(kind, id) {
        return exists(this.stagedPackFile(kind, id));
    }
    /** Pack files present in packs/<kind>/ (committed ones after open). */
    async packFiles(kind) {
        return (await fsp.readdir(this.packDir(kind))).filter((n) => n.endsWith('.pack')).map((n) => n.slice(0, -5));
    }
    /** Segment numbers of each index (fsck, bench). */
    segmentCounts() {
        return { blobs: this.indexes.blobs.segments.length, trees: this.indexes.trees.segments.length, snapshots: this.indexes.snapshots.segments.length };
    }
    /** Check the whole-file checksums of the current index segments (fsck). */
    verifyIndexes() {
        for (const name of INDEX_NAMES)
            this.indexes[name].verify();
    }
    /** Header of a committed or staged pack, read from the file. */
    async packHeader(kind, id) {
        const committed = this.isCommittedPack(kind, id);
        const file = committed ? this.packFile(kind, id) : this.stagedPackFile(kind, id);
        try {
            return { ...(await readPackHeader(file, kind)), committed };
        }
        catch (err) {
            if (err.code === 'ENOENT')
                throw new NotFound(`${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${id} is not present`);
            if (err instanceof Invalid)
                throw new Corrupt(`pack ${id}: ${err.message}`);
            throw err;
        }
    }
    /** A committed or staged pack's bytes as a stream, with its length (staged: resumable pushes). */
    async openPack(kind, id) {
        const notFound = () => new NotFound(`${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${id} is not present`);
        // A staged pack may be adopted (renamed into packs/) between the checks: look at both.
        for (const file of this.isCommittedPack(kind, id) ? [this.packFile(kind, id)] : [this.stagedPackFile(kind, id), this.packFile(kind, id)]) {
            let fd;
            try {
                fd = await fsp.open(file, 'r');
            }
            catch (err) {
                if (err.code === 'ENOENT')
                    continue;
                throw err;
            }
            const { size } = await fd.stat();
            return { stream: fd.createReadStream({ highWaterMark: 1024 * 1024 }), length: size };
        }
        throw notFound();
    }
}
/** A pack file's header and byte length, read from its first frame. */
export async function readPackHeader(file, kind) {
    const handle = await fsp.open(file, 'r');
    try {
        const first = Buffer.alloc(8);
        await handle.read(first, 0, 8, 0);
        const frame = Buffer.alloc(8 + packHeaderPayloadSize(first));
        await handle.read(frame, 0, frame.length, 0);
        const { size } = await handle.stat();
        return { header: decodePackHeader(frame, kind), byteLength: size };
    }
    finally {
        await handle.close();
    }
}
/** The published store's own checkpoint section: lines and entity locations. */
const RECORDS_SECTION = 'records';
export function sameList(a, b) {
    return a.length === b.length && a.every((x, i) => x === b[i]);
}
/** Lines in UTF-8 byte order of their names (each name encoded once, not once per comparison). */
export function sortByName(lines) {
    const keyed = lines.map((line) => ({ key: Buffer.from(line.name), line }));
    keyed.sort((a, b) => Buffer.compare(a.key, b.key));
    return keyed.map((k) => k.line);
}
function toLocator(kind, e) {
    const loc = { kind, id: e.id, pack_id: e.pack_id, offset: e.c, length: e.d, raw_length: e.e, crc32: e.b };
    if (e.f)
        loc.expanded = e.f;
    return loc;
}
function relabel(err, root) {
    if (err instanceof Corrupt)
        return new Corrupt(err.message.replace(root + '/', ''));
    return err;
}
//# sourceMappingURL=published.js.map