// registry-events.log (storage-layout.md §18.1): the events of the registry (a repository
// registered, retiring, back to active, purged, restored), framed like every log and read like
// an authority's events.log. registry.bin has no commit point naming this log's length, so the
// order is: rewrite registry.bin (the registry's commit), then append its event. A crash between
// the two leaves the event missing, and the owner appends it at the next open, derived from
// registry.bin (the registry is the truth; the log never runs ahead of it). At open, a torn last
// record (an append cut by a crash) is cut; damage anywhere else is corruption.
import { closeSync, fstatSync, openSync } from 'node:fs';
import { beginEventTime, endEventTime, observeEventTime } from './event-clock.js';
import { decodeEvent, encodeEvent, EventIndex } from './event-log.js';
import { legacyValidLength, LOG_HEADER_SIZE, LogFile, scanRecords } from './framed-log.js';
import { MAGIC } from './layout.js';
export class RegistryEventLog {
    log;
    all;
    index;
    listeners = new Set();
    /** Every event, for the owner's reconciliation at open (the log is small: a few per repository). */
    constructor(log, all) {
        this.log = log;
        this.all = all;
        const last = all.at(-1);
        this.index = new EventIndex(() => this.log, last?.seq ?? 0);
        if (last)
            observeEventTime(last.at_us);
    }
    /** Open (creating when absent), cutting an unfinished last record (reported in `notes`). */
    static open(file, notes) {
        let valid = 0;
        try {
            const fd = openSync(file, 'r');
            try {
                // A header cut short by a crash during the very first append holds no event.
                if (fstatSync(fd).size < LOG_HEADER_SIZE)
                    throw Object.assign(new Error('no header yet'), { code: 'ENOENT' });
                const { length, note } = legacyValidLength(fd, MAGIC.registryEventsLog, 'registry-events.log');
                valid = length;
                if (note)
                    notes.push(note.replace('upgrade cut', 'recovery cut').replace(' v0 record', ' record'));
            }
            finally {
                closeSync(fd);
            }
        }
        catch (err) {
            if (err.code !== 'ENOENT')
                throw err;
        }
        const log = LogFile.open(file, MAGIC.registryEventsLog, valid, []);
        const all = [];
        try {
            let expected = 0;
            for (const rec of log.records()) {
                const e = decodeEvent(rec.body, `registry-events.log: record at byte ${rec.offset}`);
                if (expected && e.seq !== expected)
                    throw new Error(`registry-events.log: record at byte ${rec.offset} has seq ${e.seq}, expected ${expected}`);
                expected = e.seq + 1;
                all.push(e);
            }
        }
        catch (err) {
            log.close();
            throw err;
        }
        return new RegistryEventLog(log, all);
    }
    get exists() {
        return this.log.length > 0;
    }
    /** Append events durably (one write), then tell the listeners. Called under the registry mutex. */
    async append(events) {
        if (!events.length)
            return [];
        const atUs = beginEventTime();
        try {
            let seq = this.index.lastSeq;
            const records = events.map((e) => ({ seq: ++seq, at_us: atUs, type: e.type, data: e.data }));
            const from = this.log.length;
            const end = await this.log.appendAt(from, this.log.frame(records.map(encodeEvent), from));
            this.log.length = end;
            this.all.push(...records);
            this.index.appended(records, from);
            for (const fn of this.listeners) {
                try {
                    fn(records);
                }
                catch {
                    // a listener's failure is its own
                }
            }
            return records;
        }
        finally {
            endEventTime(atUs);
        }
    }
    onEvents(fn) {
        this.listeners.add(fn);
        return () => this.listeners.delete(fn);
    }
    close() {
        this.log.close();
    }
}
/**
 * fsck of registry-events.log, read-only: every record decodes and sequences are gap-free. A
 * torn last record is a note (the next open cuts it), not a problem; a missing log is fine.
 */
export function checkRegistryEvents(file) {
    const problems = [];
    const notes = [];
    let fd;
    try {
        fd = openSync(file, 'r');
    }
    catch (err) {
        if (err.code === 'ENOENT')
            return { problems, notes };
        throw err;
    }
    try {
        if (fstatSync(fd).size < LOG_HEADER_SIZE) {
            notes.push('registry-events.log: shorter than its header (an unfinished first append; the next open starts it again)');
            return { problems, notes };
        }
        const { length, note } = legacyValidLength(fd, MAGIC.registryEventsLog, 'registry-events.log');
        if (note)
            notes.push(note.replace('upgrade cut', 'the next open cuts').replace(' v0 record', ' record'));
        let expected = 0;
        for (const rec of scanRecords(fd, length, 'registry-events.log')) {
            const e = decodeEvent(rec.body, `registry-events.log: record at byte ${rec.offset}`);
            if (expected && e.seq !== expected)
                problems.push(`registry-events.log: record at byte ${rec.offset} has seq ${e.seq}, expected ${expected}`);
            expected = e.seq + 1;
        }
    }
    catch (err) {
        problems.push(err.message);
    }
    finally {
        closeSync(fd);
    }
    return { problems, notes };
}
//# sourceMappingURL=registry-events.js.map