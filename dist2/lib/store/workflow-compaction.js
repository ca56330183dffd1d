// Writing a compacted workflow.log while commits go on (storage-layout.md §17). The snapshot
// holds the latest upsert of every line and entity as of a committed length L noted in a
// barrier, one upsert per record, read from the old file (records below L never change); the
// tail, every record from L to the committed end, is then copied verbatim after it in a second
// barrier. Replaying the new file gives what replaying the old one gives: the tail's upserts
// come last and win. maintenance.ts runs the phases and makes the file current; this module
// only writes it, under a temp name until it is whole (a crash leaves a temp file, removed at
// open, and an export listing never sees a half-written log). A reseal (storage-layout.md §17.2)
// writes the same kind of file from every record of the log, each kept, its fields in clear
// sealed.
import { promises as fsp } from 'node:fs';
import { holdsClear, sealRecord } from '../domain/sealing.js';
import { Corrupt } from '../domain/errors.js';
import { ChunkWriter, renameDurable, tempPathFor } from './durable.js';
import { frameBody, LOG_HEADER_SIZE, logHeader } from './framed-log.js';
import { LOG_MAGIC } from './layout.js';
import { locationOffset, locationOrdinal, WorkflowRecords } from './workflow-records.js';
/** Milliseconds of snapshot work between yields to the event loop (commits and reads go on meanwhile). */
const SLICE_MS = 4;
export class WorkflowCompactionFile {
    /** Every entity's location in the new file (the tail's override the snapshot's). */
    locations = new WorkflowRecords(() => { throw new Error('compacted locations are read after adoption'); });
    /** Records written. */
    records = 0;
    /** Bytes written. */
    length = 0;
    /** Upserts written holding a sealed field in clear (§17.2). */
    inClear = 0;
    /** The id of the store's seal key: values of format 1 it sealed count as in clear (§17.2). */
    keyId = null;
    /** Upserts copyTail sealed (a reseal). */
    sealed = 0;
    file;
    handle;
    constructor(file, handle) {
        this.file = file;
        this.handle = handle;
    }
    /** A new temp file beside `log`. */
    static async create(log) {
        const temp = tempPathFor(log.file);
        return new WorkflowCompactionFile(temp, await fsp.open(temp, 'wx', 0o644));
    }
    /**
     * Write the snapshot and sync it. Returns false, having written only part of it, when `stop`
     * says so (checked between batches of entities).
     */
    async writeSnapshot(start, atS, stop) {
        const out = new ChunkWriter(this.handle, 4 * 1024 * 1024);
        await out.write(logHeader(LOG_MAGIC.workflow));
        this.length = LOG_HEADER_SIZE;
        const put = (u) => {
            const framed = frameBody(Buffer.from(JSON.stringify({ at_s: atS, upserts: [u] }), 'utf8'));
            if (u.type !== 'line')
                this.locations.set(u, this.length, 0);
            if (holdsClear(u.type, u.body, this.keyId))
                this.inClear++;
            this.length += framed.length;
            this.records++;
            return out.write(framed);
        };
        for (const l of start.lines)
            await put({ type: 'line', id: l.name, body: { status: l.status, head_snapshot_id: l.head_snapshot_id, updated_at_s: l.updated_at_s } });
        // Reads through the old file (not the store's reader: its caches serve requests).
        const reader = new WorkflowRecords(() => start.log);
        let slice = performance.now();
        for (let next = start.entities.next(); !next.done; next = start.entities.next()) {
            const [type, id, loc] = next.value;
            const u = reader.recordAt(locationOffset(loc))[locationOrdinal(loc)];
            if (!u || u.type !== type || u.id !== id)
                throw new Corrupt(`workflow.log: record at byte ${locationOffset(loc)} does not hold ${type} ${id}`);
            await put(u);
            if (performance.now() - slice >= SLICE_MS) {
                await new Promise((resolve) => setImmediate(resolve));
                slice = performance.now();
                if (stop()) {
                    await out.end();
                    return false;
                }
            }
        }
        await out.end();
        await this.handle.sync();
        return true;
    }
    /** Start the file with the log header (a reseal: copyTail from byte 0 follows). */
    async writeHeader() {
        await this.handle.write(logHeader(LOG_MAGIC.workflow)); // at the file's position, which the writes after it continue from
        this.length = LOG_HEADER_SIZE;
    }
    /**
     * Append every committed record of `log` from byte `from` on (call in a barrier: nothing
     * commits meanwhile), verbatim, and sync. A frame holds no offset, so a record is the same
     * bytes at its new place; its upserts' locations move with it. With `sealWith` (a reseal), a
     * record holding a sealed field in clear is written again with that field sealed; it stays
     * one record with the same upserts in the same order.
     */
    async copyTail(log, from, sealWith = null) {
        const out = new ChunkWriter(this.handle, 4 * 1024 * 1024);
        for (const rec of log.recordsFrom(from)) {
            let txn;
            try {
                txn = JSON.parse(rec.body.toString('utf8'));
                if (!Array.isArray(txn?.upserts))
                    throw new Error('no upserts');
            }
            catch (err) {
                throw new Corrupt(`${log.name}: record at byte ${rec.offset} is not a transaction (${err.message})`);
            }
            let upserts = txn.upserts;
            let body = rec.body;
            const clear = upserts.filter((u) => holdsClear(u.type, u.body, this.keyId)).length;
            if (clear && sealWith) {
                upserts = upserts.map((u) => (holdsClear(u.type, u.body, this.keyId) ? { ...u, body: sealRecord(sealWith, u.type, u.id, u.body) } : u));
                body = Buffer.from(JSON.stringify({ ...txn, upserts }), 'utf8');
                this.sealed += clear;
            }
            else {
                this.inClear += clear;
            }
            upserts.forEach((u, i) => {
                if (u.type !== 'line')
                    this.locations.set(u, this.length, i);
            });
            const framed = frameBody(body);
            this.length += framed.length;
            this.records++;
            await out.write(framed);
        }
        await out.end();
        await this.handle.sync();
    }
    /** Close the whole file and give it its name (durably). */
    async finish(target) {
        await this.handle.close();
        this.handle = null;
        await renameDurable(this.file, target);
        this.file = target;
    }
    /** Remove the file (a compaction that stopped or failed before a commit could name it). */
    async discard() {
        await this.handle?.close().catch(() => { });
        this.handle = null;
        await fsp.rm(this.file, { force: true });
    }
}
//# sourceMappingURL=workflow-compaction.js.map