// access.log (storage-layout.md §21): the server's accounts, tokens (their hashes), groups,
// repository grants and the audit feed, one JSON record per framed entry. The log is the only
// truth: the state is its fold (lib/authority/access.ts). One change is one record, appended
// with one durable write before the change is acknowledged, so a change is all or nothing across
// a crash. At open an unfinished last record (an append cut by a crash, never acknowledged) is
// cut; damage anywhere else is corruption, reported and never cut away.
import { closeSync, fstatSync, openSync } from 'node:fs';
import { Corrupt } from '../domain/errors.js';
import { legacyValidLength, LOG_HEADER_SIZE, LogFile, scanRecords } from './framed-log.js';
import { MAGIC } from './layout.js';
const NAME = 'access.log';
export function decodeAccessRecord(body, where) {
    let value;
    try {
        value = JSON.parse(body.toString('utf8'));
    }
    catch {
        throw new Corrupt(`${where}: not JSON`);
    }
    const r = value;
    if (!r || typeof r !== 'object' || !Number.isSafeInteger(r.seq) || r.seq < 1 || typeof r.type !== 'string' || !Number.isSafeInteger(r.at_s))
        throw new Corrupt(`${where}: not an access record`);
    return r;
}
export class AccessLog {
    log;
    offsets;
    lastSeq;
    constructor(log, offsets, lastSeq) {
        this.log = log;
        this.offsets = offsets;
        this.lastSeq = lastSeq;
    }
    /** Open (creating when absent), calling `each` with every record in order; a cut tail is reported in `notes`. */
    static open(file, notes, each) {
        let valid = 0;
        try {
            const fd = openSync(file, 'r');
            try {
                if (fstatSync(fd).size >= LOG_HEADER_SIZE) {
                    const { length, note } = legacyValidLength(fd, MAGIC.accessLog, NAME);
                    valid = length;
                    if (note)
                        notes.push(note.replace('upgrade cut', 'recovery cut').replace(' v0 record', ' record'));
                }
            }
            finally {
                closeSync(fd);
            }
        }
        catch (err) {
            if (err.code !== 'ENOENT')
                throw err;
        }
        const log = LogFile.open(file, MAGIC.accessLog, valid, notes);
        const offsets = [];
        let last = 0;
        try {
            for (const rec of log.records()) {
                const r = decodeAccessRecord(rec.body, `${NAME}: record at byte ${rec.offset}`);
                if (r.seq !== last + 1)
                    throw new Corrupt(`${NAME}: record at byte ${rec.offset} has seq ${r.seq}, expected ${last + 1}`);
                last = r.seq;
                offsets.push(rec.offset);
                each(r);
            }
        }
        catch (err) {
            log.close();
            throw err;
        }
        return new AccessLog(log, offsets, last);
    }
    get seq() {
        return this.lastSeq;
    }
    /** Append one record durably (one O_DSYNC write); the caller serializes appends. */
    async append(type, actor, fields) {
        const record = { ...fields, seq: this.lastSeq + 1, at_s: Math.floor(Date.now() / 1000), type, actor };
        const from = this.log.length;
        const end = await this.log.appendAt(from, this.log.frame([Buffer.from(JSON.stringify(record), 'utf8')], from));
        this.log.length = end;
        this.offsets.push(from === 0 ? LOG_HEADER_SIZE : from);
        this.lastSeq = record.seq;
        return record;
    }
    /** Up to `limit` records with seq > `after`, oldest first (read from the file: the log is not kept in memory). */
    page(after, limit) {
        const out = [];
        if (after >= this.lastSeq)
            return out;
        const start = this.offsets[Math.max(0, after)];
        for (const rec of this.log.recordsFrom(start, 256 * 1024)) {
            out.push(decodeAccessRecord(rec.body, `${NAME}: record at byte ${rec.offset}`));
            if (out.length >= limit)
                break;
        }
        return out;
    }
    close() {
        this.log.close();
    }
}
/** fsck of access.log, read-only: every record decodes and sequences are gap-free; a torn last record is a note. */
export function checkAccessLog(file) {
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
        if (fstatSync(fd).size < LOG_HEADER_SIZE)
            return { problems, notes };
        const { length, note } = legacyValidLength(fd, MAGIC.accessLog, NAME);
        if (note)
            notes.push(note.replace('upgrade cut', 'the next open cuts').replace(' v0 record', ' record'));
        let expected = 1;
        for (const rec of scanRecords(fd, length, NAME)) {
            const r = decodeAccessRecord(rec.body, `${NAME}: record at byte ${rec.offset}`);
            if (r.seq !== expected)
                problems.push(`${NAME}: record at byte ${rec.offset} has seq ${r.seq}, expected ${expected}`);
            expected = r.seq + 1;
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
//# sourceMappingURL=access-log.js.map