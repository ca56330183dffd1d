// events.log (storage-layout.md §18): the events of one authority, one framed record per event,
// appended by the commit that holds the records they describe. Sequence numbers are gap-free
// from the first event ever (1) and the commit point counts them (event_count), so the newest
// sequence is known without reading the log; a compaction may drop the oldest events, after
// which the log starts at a later sequence.
//
// Reads by sequence use a sparse in-memory index (the offset and time of every 64th event), built
// by one scan on the first read that needs it and extended as commits append, plus the most
// recent events kept decoded, which is what live subscribers catch up from. The times in the
// sparse index let a reader find the first event at or after a time (the global feed resumes
// every repository from one time) with one binary search and a scan of at most 64 records.
import { Corrupt } from '../domain/errors.js';
import { FRAME_OVERHEAD, LOG_HEADER_SIZE } from './framed-log.js';
export function encodeEvent(e) {
    return Buffer.from(JSON.stringify({ seq: e.seq, at_us: e.at_us, type: e.type, data: e.data }), 'utf8');
}
export function decodeEvent(body, where) {
    let e;
    try {
        e = JSON.parse(body.toString('utf8'));
    }
    catch (err) {
        throw new Corrupt(`${where}: not JSON (${err.message})`);
    }
    if (!e || typeof e !== 'object' || !Number.isSafeInteger(e.seq) || e.seq < 1 || !Number.isSafeInteger(e.at_us) || typeof e.type !== 'string' || !e.data || typeof e.data !== 'object' || Array.isArray(e.data)) {
        throw new Corrupt(`${where}: not an event record`);
    }
    return e;
}
const SPARSE_EVERY = 64;
const RECENT = 4096;
export class EventIndex {
    log;
    newest;
    /** Every SPARSE_EVERY-th kept event, from the oldest; null until first needed. */
    sparse = null;
    oldest = 0;
    /** Time of the oldest kept event (0 when none is kept). */
    oldestAt = 0;
    /** The most recent events, oldest first (appended by commits; empty after an open). */
    recent = [];
    /** `log` returns the current events.log file (a compaction replaces it). */
    constructor(log, newest) {
        this.log = log;
        this.newest = newest;
        this.oldest = this.readOldest();
    }
    /** Seq of the newest committed event (0: none). */
    get lastSeq() { return this.newest; }
    /** Seq of the oldest event still kept (lastSeq + 1 when the log holds none). */
    get oldestSeq() { return this.oldest; }
    /** Time (µs) of the oldest event still kept; null when the log holds none. */
    get oldestAtUs() { return this.oldest <= this.newest ? this.oldestAt : null; }
    readOldest() {
        this.oldestAt = 0;
        const log = this.log();
        if (log.length <= LOG_HEADER_SIZE)
            return this.newest + 1;
        const first = log.recordsFrom(LOG_HEADER_SIZE, 64 * 1024).next();
        if (first.done)
            return this.newest + 1;
        const e = decodeEvent(first.value.body, `${log.name}: record at byte ${LOG_HEADER_SIZE}`);
        this.oldestAt = e.at_us;
        return e.seq;
    }
    /** The log was replaced (compaction): start over from its first record. */
    reset(newest) {
        this.newest = newest;
        this.sparse = null;
        this.recent = this.recent.filter((e) => e.seq <= newest);
        this.oldest = this.readOldest();
        this.recent = this.recent.filter((e) => e.seq >= this.oldest);
    }
    /** A commit appended `events` starting at byte `from` of the log. */
    appended(events, from) {
        let at = Math.max(from, LOG_HEADER_SIZE);
        // An empty log's oldest seq is already lastSeq + 1, the first appended one; its time is new.
        if (events.length && this.oldest > this.newest)
            this.oldestAt = events[0].at_us;
        for (const e of events) {
            if (this.sparse && (e.seq - this.oldest) % SPARSE_EVERY === 0)
                this.sparse.push({ offset: at, at_us: e.at_us });
            at += encodeEvent(e).length + FRAME_OVERHEAD;
            this.recent.push(e);
        }
        if (this.recent.length > RECENT * 2)
            this.recent = this.recent.slice(-RECENT);
        if (events.length)
            this.newest = events[events.length - 1].seq;
    }
    /**
     * Up to `limit` events with seq > `after`, oldest first. The caller checks `after` against
     * oldestSeq first (a gap is answered 410, never skipped).
     */
    read(after, limit) {
        const from = Math.max(after + 1, this.oldest);
        if (from > this.newest || limit <= 0)
            return [];
        if (this.recent.length && this.recent[0].seq <= from) {
            const i = from - this.recent[0].seq;
            return this.recent.slice(i, i + limit);
        }
        const sparse = this.sparseIndex();
        const k = Math.floor((from - this.oldest) / SPARSE_EVERY);
        let expected = this.oldest + k * SPARSE_EVERY;
        const out = [];
        const log = this.log();
        for (const rec of log.recordsFrom(sparse[k].offset, 256 * 1024)) {
            const e = decodeEvent(rec.body, `${log.name}: record at byte ${rec.offset}`);
            if (e.seq !== expected)
                throw new Corrupt(`${log.name}: record at byte ${rec.offset} has seq ${e.seq}, expected ${expected}`);
            expected++;
            if (e.seq >= from)
                out.push(e);
            if (out.length >= limit || e.seq >= this.newest)
                break;
        }
        return out;
    }
    /**
     * Seq of the first kept event whose time is at or after `atUs` (lastSeq + 1 when there is
     * none). Times never decrease along the log, so this is where a reader positioned at a time
     * starts: the recent tail answers by binary search, older events by a binary search of the
     * sparse index and a scan of at most SPARSE_EVERY records.
     */
    firstAtOrAfter(atUs) {
        if (this.oldest > this.newest)
            return this.newest + 1;
        if (this.oldestAt >= atUs)
            return this.oldest;
        const recent = this.recent;
        if (recent.length && recent[0].at_us < atUs) {
            let lo = 0;
            let hi = recent.length;
            while (lo < hi) {
                const mid = (lo + hi) >>> 1;
                if (recent[mid].at_us < atUs)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            return lo < recent.length ? recent[lo].seq : this.newest + 1;
        }
        const sparse = this.sparseIndex();
        // The last sparse entry before `atUs` (entry 0, the oldest event, is before it: checked above).
        let lo = 0;
        let hi = sparse.length - 1;
        while (lo < hi) {
            const mid = (lo + hi + 1) >>> 1;
            if (sparse[mid].at_us < atUs)
                lo = mid;
            else
                hi = mid - 1;
        }
        const log = this.log();
        for (const rec of log.recordsFrom(sparse[lo].offset, 64 * 1024)) {
            const e = decodeEvent(rec.body, `${log.name}: record at byte ${rec.offset}`);
            if (e.at_us >= atUs)
                return e.seq;
            if (e.seq >= this.newest)
                break;
        }
        return this.newest + 1;
    }
    sparseIndex() {
        if (this.sparse)
            return this.sparse;
        const sparse = [];
        let k = 0;
        const log = this.log();
        for (const rec of log.records()) {
            if (k % SPARSE_EVERY === 0)
                sparse.push({ offset: rec.offset, at_us: decodeEvent(rec.body, `${log.name}: record at byte ${rec.offset}`).at_us });
            k++;
        }
        this.sparse = sparse;
        return sparse;
    }
}
//# sourceMappingURL=event-log.js.map