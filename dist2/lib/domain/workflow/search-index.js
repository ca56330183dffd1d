// The change search's posting lists (docs/api.md "Searching changes"): per kind of term, key →
// the ascending sequences of the changes it names. A pure function of the committed change,
// patchset, review and comment records: every list only ever gains entries, and what one record
// adds is a subset of what a later version of the same record adds (titles, base lines, owners
// and patchset paths never change; reviewers are only added), so applying records in any order,
// and any older version of a record before the latest, gives the same lists as applying the
// latest records once. That is what lets the lists be a checkpoint section (storage-layout.md
// §17.1, `change-search`) that fsck rebuilds from the records byte for byte.
//
// Memory: each kind's lists are one flat Uint32Array of sequences with an offset per key
// (4 bytes an entry), plus small ascending JS arrays for what was added since the last
// compaction; those are merged into the flat array once they hold an eighth of it.
import { grow } from './indexes.js';
import { titleWords } from './search-query.js';
/** The section of workflow.ckpt (storage-layout.md §17.1). */
export const SEARCH_SECTION = 'change-search';
/** The section's own version: a section of another version is not used (the lists are built). */
export const SEARCH_SECTION_VERSION = 1;
/** Path prefixes indexed per patchset; past it the change goes on the "every prefix" list. */
export const MAX_PREFIXES = 64;
/**
 * The kinds of lists, in section order. `prefixes` holds the one- and two-segment prefixes of a
 * patchset's paths (`lib`, `lib/http`), `files` the three-segment ones (`lib/http/routes.ts`)
 * hashed into FILE_BUCKETS buckets (keys `fileBucket`), so a `file:` of one file reads few
 * candidates while the keys stay few (a repository may touch millions of distinct paths). `wide`: changes with a patchset of more than
 * MAX_PREFIXES one- and two-segment prefixes, or a truncated path list (on no prefix list);
 * `deep`: changes with a patchset of more than MAX_PREFIXES three-segment ones (on no `files`
 * list for it). `wide`, `commented` and `deep` have one key, the empty string.
 */
export const SEARCH_KINDS = ['words', 'lines', 'owners', 'reviewers', 'prefixes', 'wide', 'commented', 'files', 'deep'];
/** Kinds of one key (the empty string). */
const SINGLE = ['wide', 'commented', 'deep'];
const EMPTY = new Uint32Array(0);
/** Add `seq` to an ascending array, once; true when it was added. */
function addSorted(list, seq) {
    const n = list.length;
    if (n === 0 || list[n - 1] < seq) {
        list.push(seq);
        return true;
    }
    const i = lowerBound(list, seq, 0, n);
    if (list[i] === seq)
        return false;
    list.splice(i, 0, seq);
    return true;
}
/** First index in [lo, hi) of `a` whose value is ≥ x. */
export function lowerBound(a, x, lo, hi) {
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
/** Key → ascending change sequences, flat (see the module comment). */
export class Postings {
    slots = new Map();
    names = [];
    /** Slot s's base entries are base[off[s] .. off[s + 1]) (slots ≥ baseSlots have none). */
    off = new Uint32Array(1);
    base = EMPTY;
    baseSlots = 0;
    /** Entries added since the last compaction, per slot: ascending, none of them in the base. */
    extra = [];
    extraCount = 0;
    /** While set, additions are not merged into the flat array as they grow (a bulk build merges once at its end). */
    bulk = false;
    get keyCount() { return this.names.length; }
    get entryCount() { return this.base.length + this.extraCount; }
    /** Bytes the lists hold (the flat arrays and the additions), without the key strings. */
    get bytes() { return this.base.byteLength + this.off.byteLength + this.extraCount * 8; }
    add(key, seq) {
        let slot = this.slots.get(key);
        if (slot === undefined) {
            slot = this.names.length;
            this.slots.set(key, slot);
            this.names.push(key);
        }
        if (slot < this.baseSlots) {
            const lo = this.off[slot];
            const hi = this.off[slot + 1];
            const i = lowerBound(this.base, seq, lo, hi);
            if (i < hi && this.base[i] === seq)
                return;
        }
        let list = this.extra[slot];
        if (!list)
            this.extra[slot] = list = [];
        if (addSorted(list, seq))
            this.extraCount++;
        if (!this.bulk && this.extraCount >= Math.max(4096, this.base.length >>> 3))
            this.compact();
    }
    /** The ascending sequences of `key` (a view of the flat array when nothing was added since). */
    get(key) {
        const slot = this.slots.get(key);
        if (slot === undefined)
            return EMPTY;
        const b = slot < this.baseSlots ? this.base.subarray(this.off[slot], this.off[slot + 1]) : EMPTY;
        const e = this.extra[slot];
        return e ? merge(b, e) : b;
    }
    /** Merge the additions into the flat array. */
    compact() {
        if (this.extraCount === 0 && this.baseSlots === this.names.length)
            return;
        const n = this.names.length;
        const off = new Uint32Array(n + 1);
        const base = new Uint32Array(this.base.length + this.extraCount);
        let at = 0;
        for (let s = 0; s < n; s++) {
            off[s] = at;
            const b = s < this.baseSlots ? this.base.subarray(this.off[s], this.off[s + 1]) : EMPTY;
            const e = this.extra[s];
            if (!e) {
                base.set(b, at);
                at += b.length;
                continue;
            }
            let i = 0;
            let j = 0;
            while (i < b.length || j < e.length)
                base[at++] = j >= e.length || (i < b.length && b[i] < e[j]) ? b[i++] : e[j++];
        }
        off[n] = at;
        this.off = off;
        this.base = base;
        this.baseSlots = n;
        this.extra = [];
        this.extraCount = 0;
    }
    /** Keys in UTF-16 code-unit order (equal lists encode to equal bytes). */
    sortedKeys() {
        return [...this.names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    }
    /** Install decoded lists: ascending keys, key k's ascending list at flat[off[k] .. off[k + 1]). */
    static fromFlat(keys, off, flat) {
        const p = new Postings();
        keys.forEach((k, s) => {
            p.slots.set(k, s);
            p.names.push(k);
        });
        p.off = off;
        p.base = flat;
        p.baseSlots = keys.length;
        return p;
    }
}
function merge(a, b) {
    const out = new Uint32Array(a.length + b.length);
    let i = 0;
    let j = 0;
    let k = 0;
    while (i < a.length || j < b.length)
        out[k++] = j >= b.length || (i < a.length && a[i] < b[j]) ? a[i++] : b[j++];
    return out;
}
/** Path prefixes of one and two segments of `path` (a file at the top gives itself). */
export function prefixesOf(path) {
    const parts = path.split('/');
    return parts.length === 1 ? [parts[0]] : [parts[0], `${parts[0]}/${parts[1]}`];
}
/** The three-segment prefix of `path` (`a/b/c` of `a/b/c/d`), or null for a path of fewer segments. */
export function thirdPrefixOf(path) {
    let at = -1;
    for (let k = 0; k < 3; k++) {
        at = path.indexOf('/', at + 1);
        if (at < 0)
            return k === 2 ? path : null;
    }
    return path.slice(0, at);
}
/** Buckets of the `files` lists. */
export const FILE_BUCKETS = 65_536;
/**
 * The `files` key of a three-segment prefix: FNV-1a (32-bit) over its UTF-16 code units, modulo
 * FILE_BUCKETS, in lowercase hexadecimal. Distinct prefixes may share a key: the records decide.
 */
export function fileBucket(prefix) {
    let h = 0x811c9dc5;
    for (let i = 0; i < prefix.length; i++)
        h = Math.imul(h ^ prefix.charCodeAt(i), 0x01000193);
    return ((h >>> 0) % FILE_BUCKETS).toString(16);
}
/** The change sequence an id of the change or of one of its records starts with (0: none). */
export const changeSeqOfId = (id) => {
    const m = /^change-([1-9][0-9]{0,9})(?:\.|$)/.exec(id);
    return m ? Number(m[1]) : 0;
};
export class SearchIndex {
    lists = {
        words: new Postings(), lines: new Postings(), owners: new Postings(), reviewers: new Postings(),
        prefixes: new Postings(), wide: new Postings(), commented: new Postings(), files: new Postings(), deep: new Postings(),
    };
    /** Changes whose title and line are indexed (they never change after create). */
    indexed = new Uint8Array(1024);
    applyChange(c) {
        const seq = c.sequence;
        if (typeof c.owner === 'string')
            this.lists.owners.add(c.owner, seq);
        if (Array.isArray(c.reviewers)) {
            for (const r of c.reviewers) {
                const name = typeof r === 'string' ? r : r && typeof r === 'object' && typeof r.name === 'string' ? r.name : null;
                if (name !== null)
                    this.lists.reviewers.add(name, seq);
            }
        }
        if (seq < this.indexed.length && this.indexed[seq])
            return;
        this.indexed = grow(this.indexed, seq, (n) => new Uint8Array(n));
        this.indexed[seq] = 1;
        for (const w of titleWords(c.title))
            this.lists.words.add(w, seq);
        this.lists.lines.add(c.base_line, seq);
    }
    applyPatchset(p) {
        const seq = changeSeqOfId(p.change_id);
        if (!seq)
            return;
        const set = new Set();
        const third = new Set();
        for (const f of p.diff?.files ?? []) {
            for (const x of prefixesOf(f.path))
                set.add(x);
            const t = thirdPrefixOf(f.path);
            if (t !== null)
                third.add(fileBucket(t));
        }
        if (set.size > MAX_PREFIXES || p.diff?.files_truncated) {
            this.lists.wide.add('', seq);
            return;
        }
        for (const x of set)
            this.lists.prefixes.add(x, seq);
        if (third.size > MAX_PREFIXES)
            this.lists.deep.add('', seq);
        else
            for (const x of third)
                this.lists.files.add(x, seq);
    }
    applyReview(r) {
        const seq = changeSeqOfId(r.change_id);
        if (!seq)
            return;
        if (r.action !== 'request' && typeof r.reviewer === 'string')
            this.lists.reviewers.add(r.reviewer, seq);
        if (typeof r.reviewer_group === 'string')
            this.lists.reviewers.add(r.reviewer_group, seq);
        if (Array.isArray(r.reviewers))
            for (const p of r.reviewers)
                if (typeof p === 'string')
                    this.lists.reviewers.add(p, seq);
    }
    /** A comment record's id (`change-N.…`): the change has comments. */
    applyComment(id) {
        const seq = changeSeqOfId(id);
        if (seq)
            this.lists.commented.add('', seq);
    }
    /** Keys and entries held, and the bytes of the flat arrays (figures in the bench). */
    size() {
        let keys = 0;
        let entries = 0;
        let bytes = this.indexed.byteLength;
        for (const k of SEARCH_KINDS) {
            keys += this.lists[k].keyCount;
            entries += this.lists[k].entryCount;
            bytes += this.lists[k].bytes;
        }
        return { keys, entries, bytes };
    }
    /** Merge every kind's additions into its flat array. */
    compact() {
        for (const k of SEARCH_KINDS)
            this.lists[k].compact();
    }
    /**
     * A build from every record: the additions stay in plain arrays until `compact` (merging
     * them into the flat arrays as they grow would copy the flat arrays again and again).
     */
    set bulk(on) {
        for (const k of SEARCH_KINDS)
            this.lists[k].bulk = on;
    }
    /**
     * The section (storage-layout.md §17.1 `change-search`): version u32, change count u32, then
     * per kind in SEARCH_KINDS order: key count u32, and per key in code-unit order its name
     * (bytes: u32 length, UTF-8) and its list (bytes: u32 length, then each sequence as the
     * unsigned LEB128 of its difference from the one before, the first from 0).
     */
    encode(changeCount) {
        // One growing buffer (no buffer per key: a checkpoint of a large repository stays cheap).
        let out = Buffer.allocUnsafe(1 << 16);
        let at = 0;
        const room = (n) => {
            if (at + n <= out.length)
                return;
            let size = out.length * 2;
            while (size < at + n)
                size *= 2;
            const next = Buffer.allocUnsafe(size);
            out.copy(next, 0, 0, at);
            out = next;
        };
        const u32 = (n) => {
            room(4);
            out.writeUInt32LE(n >>> 0, at);
            at += 4;
        };
        u32(SEARCH_SECTION_VERSION);
        u32(changeCount);
        for (const kind of SEARCH_KINDS) {
            const p = this.lists[kind];
            const keys = p.sortedKeys();
            u32(keys.length);
            for (const key of keys) {
                const len = Buffer.byteLength(key, 'utf8');
                u32(len);
                room(len);
                at += out.write(key, at, 'utf8');
                const list = p.get(key);
                room(4 + list.length * 5);
                const lengthAt = at;
                at += 4;
                let prev = 0;
                for (let i = 0; i < list.length; i++) {
                    let d = list[i] - prev;
                    prev = list[i];
                    while (d >= 0x80) {
                        out[at++] = (d & 0x7f) | 0x80;
                        d >>>= 7;
                    }
                    out[at++] = d;
                }
                out.writeUInt32LE(at - lengthAt - 4, lengthAt);
            }
        }
        return Buffer.from(out.subarray(0, at));
    }
    /**
     * The lists of a section. Throws (the caller builds the lists from the records instead) when
     * it is of another version, does not decode, names a change beyond its change count, or counts
     * more changes than `changeCount` (the changes the book holds now). `indexedChanges`: the
     * changes the section covers (its change count) are marked indexed.
     */
    static decode(buf, changeCount) {
        let at = 0;
        const fail = (why) => { throw new Error(`section ${SEARCH_SECTION}: ${why}`); };
        const u32 = () => {
            if (at + 4 > buf.length)
                fail('ends early');
            const n = buf.readUInt32LE(at);
            at += 4;
            return n;
        };
        const bytes = () => {
            const n = u32();
            if (at + n > buf.length)
                fail('ends early');
            const b = buf.subarray(at, at + n);
            at += n;
            return b;
        };
        const version = u32();
        if (version !== SEARCH_SECTION_VERSION)
            fail(`version ${version} is not ${SEARCH_SECTION_VERSION}`);
        const changes = u32();
        if (changes > changeCount)
            fail(`it counts ${changes} changes, the workflow indexes ${changeCount}`);
        const x = new SearchIndex();
        for (const kind of SEARCH_KINDS) {
            // Two passes over the kind: count the entries (each varint ends in a byte below 0x80),
            // then decode them into one flat array (no array per list: the open's garbage stays small).
            const n = u32();
            const start = at;
            let total = 0;
            for (let k = 0; k < n; k++) {
                bytes();
                const enc = bytes();
                for (let i = 0; i < enc.length; i++)
                    if (enc[i] < 0x80)
                        total++;
            }
            at = start;
            const keys = [];
            const off = new Uint32Array(n + 1);
            const flat = new Uint32Array(total);
            let m = 0;
            for (let k = 0; k < n; k++) {
                const key = bytes().toString('utf8');
                if (keys.length > 0 && !(keys[keys.length - 1] < key))
                    fail(`${kind} keys are not in ascending order`);
                if (SINGLE.includes(kind) && key !== '')
                    fail(`${kind} has a key`);
                const enc = bytes();
                off[k] = m;
                let prev = 0;
                let i = 0;
                while (i < enc.length) {
                    let d = 0;
                    let shift = 0;
                    for (;;) {
                        if (i >= enc.length || shift > 28)
                            fail(`a ${kind} list does not decode`);
                        const b = enc[i++];
                        d += (b & 0x7f) * 2 ** shift;
                        shift += 7;
                        if (b < 0x80)
                            break;
                    }
                    if (d === 0 && m > off[k])
                        fail(`a ${kind} list is not ascending`);
                    prev += d;
                    if (prev < 1 || prev > changes)
                        fail(`a ${kind} list names a change beyond ${changes}`);
                    flat[m++] = prev;
                }
                if (m === off[k])
                    fail(`a ${kind} list is empty`);
                keys.push(key);
            }
            off[n] = m;
            x.lists[kind] = Postings.fromFlat(keys, off, flat);
        }
        if (at !== buf.length)
            fail(`${buf.length - at} bytes left over`);
        x.indexed = new Uint8Array(Math.max(1024, changes + 1));
        x.indexed.fill(1, 1, changes + 1);
        return { index: x, changes };
    }
    /** The lists of these records (fsck's rebuild; the order of the records does not matter). */
    static rebuild(records) {
        const x = new SearchIndex();
        for (const c of records.changes)
            x.applyChange(c);
        for (const p of records.patchsets)
            x.applyPatchset(p);
        for (const r of records.reviews)
            x.applyReview(r);
        for (const id of records.commentIds)
            x.applyComment(id);
        return x;
    }
}
//# sourceMappingURL=search-index.js.map