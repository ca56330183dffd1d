// The compact in-memory index of reviews, attestations and policy decisions (the records stay in
// workflow.log; lib/store/workflow-records.ts reads them by id): per change its review count
// and its latest review request naming a group (the reviewer inbox), per patchset its
// attestation and decision counts, and the head of the decision chain. Their ids derive from the
// owner and a sequence that runs from 1 to the count (review-rules.ts), so counts name every
// record. Typed arrays indexed by change sequence keep the cost a few dozen bytes per change and
// per patchset with evidence, whatever the records hold. Applying a record is commutative (counts
// are the highest sequence seen; the open checks them against the store's entity counts), so
// the index of a set of records does not depend on the order they are applied in, and its
// checkpoint section is a function of the records alone (fsck rebuilds it byte for byte). It
// changes when the review book's lookups need another index, never with the records' shape.
/** The review book's section of workflow.ckpt (storage-layout.md §17.1). */
export const REVIEW_SECTION = 'review-indexes';
import { ATTESTATION, attestationId, decisionId, POLICY_DECISION, REVIEW, reviewId } from './review-rules.js';
import { grow } from './indexes.js';
/** The entity types the index covers (workflow.log, storage-layout.md §17). */
export const REVIEW_TYPES = [REVIEW, ATTESTATION, POLICY_DECISION];
const CHANGE_RE = /^change-([1-9][0-9]{0,9})$/;
const PATCHSET_RE = /^change-([1-9][0-9]{0,9})\.ps-([1-9][0-9]{0,9})$/;
const MAX_I32 = 0x7fffffff;
/** The sequence of a change id (`change-12` → 12), or 0 when it is not one. */
export function changeSeqOf(id) {
    const m = CHANGE_RE.exec(id);
    const n = m ? Number(m[1]) : 0;
    return n <= MAX_I32 ? n : 0;
}
/** The change sequence and number of a patchset id (`change-12.ps-3`), or null when it is not one. */
export function patchsetSeqOf(id) {
    const m = PATCHSET_RE.exec(id);
    if (!m)
        return null;
    const change = Number(m[1]);
    const number = Number(m[2]);
    return change <= MAX_I32 && number <= MAX_I32 ? { change, number } : null;
}
const i32 = (n) => new Int32Array(n);
const f64 = (n) => new Float64Array(n);
export class ReviewIndex {
    /** Records the counts name, per type (the open compares them with the store's entity counts). */
    reviews = 0;
    attestations = 0;
    decisions = 0;
    /** The newest decision of the chain: its position (0: none yet) and sha256 ('' for none). */
    chainSeq = 0;
    chainSha256 = '';
    /** Per change sequence: review count; the latest group request's review sequence, group number, time. */
    reviewCount = i32(256);
    requestReview = i32(256);
    requestGroup = i32(256);
    requestAt = f64(256);
    /** Per change sequence: its first patchset slot (0: none); slots of a change are a linked list. */
    firstSlot = i32(256);
    /** Per slot (from 1): the patchset number, the next slot of its change, attestation and decision counts. */
    slots = 0;
    slotNumber = i32(256);
    slotNext = i32(256);
    slotAttestations = i32(256);
    slotDecisions = i32(256);
    /** Reviewer group names by number (interned: each name once). */
    groups = [];
    groupNumber = new Map();
    /** Highest change sequence with an entry. */
    maxChange = 0;
    growChanges(change) {
        if (change <= 0 || change > MAX_I32)
            throw new Error(`change sequence ${change} is out of range`);
        this.reviewCount = grow(this.reviewCount, change, i32);
        this.requestReview = grow(this.requestReview, change, i32);
        this.requestGroup = grow(this.requestGroup, change, i32);
        this.requestAt = grow(this.requestAt, change, f64);
        this.firstSlot = grow(this.firstSlot, change, i32);
        if (change > this.maxChange)
            this.maxChange = change;
    }
    group(name) {
        let n = this.groupNumber.get(name);
        if (n === undefined) {
            n = this.groups.length;
            this.groups.push(name);
            this.groupNumber.set(name, n);
        }
        return n;
    }
    /** The slot of patchset `number` of `change`, created when `create`; 0 when there is none. */
    slot(change, number, create) {
        if (change <= 0 || change > this.maxChange) {
            if (!create)
                return 0;
            this.growChanges(change);
        }
        let last = 0;
        for (let s = this.firstSlot[change]; s !== 0; s = this.slotNext[s]) {
            if (this.slotNumber[s] === number)
                return s;
            last = s;
        }
        if (!create)
            return 0;
        const s = ++this.slots;
        this.slotNumber = grow(this.slotNumber, s, i32);
        this.slotNext = grow(this.slotNext, s, i32);
        this.slotAttestations = grow(this.slotAttestations, s, i32);
        this.slotDecisions = grow(this.slotDecisions, s, i32);
        this.slotNumber[s] = number;
        if (last === 0)
            this.firstSlot[change] = s;
        else
            this.slotNext[last] = s;
        return s;
    }
    /** Review `sequence` of `change` committed; `request` when it is a review request naming a group. */
    addReview(change, sequence, request) {
        if (sequence <= 0 || sequence > MAX_I32)
            throw new Error(`review sequence ${sequence} is out of range`);
        this.growChanges(change);
        if (sequence > this.reviewCount[change]) {
            this.reviews += sequence - this.reviewCount[change];
            this.reviewCount[change] = sequence;
        }
        if (request && sequence > this.requestReview[change]) {
            this.requestReview[change] = sequence;
            this.requestGroup[change] = this.group(request.group);
            this.requestAt[change] = request.requested_at_s;
        }
    }
    /** Attestation `sequence` of patchset `number` of `change` committed. */
    addAttestation(change, number, sequence) {
        if (sequence <= 0 || sequence > MAX_I32)
            throw new Error(`attestation sequence ${sequence} is out of range`);
        const s = this.slot(change, number, true);
        if (sequence > this.slotAttestations[s]) {
            this.attestations += sequence - this.slotAttestations[s];
            this.slotAttestations[s] = sequence;
        }
    }
    /** Decision `sequence` of patchset `number` of `change` committed, at chain position `chainSeq`. */
    addDecision(change, number, sequence, chainSeq, sha256) {
        if (sequence <= 0 || sequence > MAX_I32)
            throw new Error(`decision sequence ${sequence} is out of range`);
        const s = this.slot(change, number, true);
        if (sequence > this.slotDecisions[s]) {
            this.decisions += sequence - this.slotDecisions[s];
            this.slotDecisions[s] = sequence;
        }
        if (chainSeq > this.chainSeq) {
            this.chainSeq = chainSeq;
            this.chainSha256 = sha256;
        }
    }
    /**
     * A committed review, attestation or policy decision (`type` one of REVIEW_TYPES); throws
     * when its id is not the one its owner and sequence derive.
     */
    addRecord(type, id, body) {
        const bad = (why) => { throw new Error(`${type} ${id} ${why}`); };
        if (!body || typeof body !== 'object')
            bad('is not an object');
        if (type === REVIEW) {
            const x = body;
            const c = changeSeqOf(x.change_id);
            if (c === 0 || x.review_id !== id || id !== reviewId(x.change_id, x.sequence))
                bad(`is not review ${x.sequence} of ${x.change_id}`);
            this.addReview(c, x.sequence, x.action === 'request' && typeof x.reviewer_group === 'string' ? { group: x.reviewer_group, requested_at_s: x.created_at_s } : null);
        }
        else if (type === ATTESTATION) {
            const x = body;
            const p = patchsetSeqOf(x.patchset_id) ?? bad(`names patchset ${x.patchset_id}`);
            if (x.attestation_id !== id || id !== attestationId(x.patchset_id, x.sequence))
                bad(`is not attestation ${x.sequence} of ${x.patchset_id}`);
            this.addAttestation(p.change, p.number, x.sequence);
        }
        else if (type === POLICY_DECISION) {
            const x = body;
            const p = patchsetSeqOf(x.patchset_id) ?? bad(`names patchset ${x.patchset_id}`);
            if (x.decision_id !== id || id !== decisionId(x.patchset_id, x.sequence))
                bad(`is not decision ${x.sequence} of ${x.patchset_id}`);
            // A decision without a chain position (never written so; fsck names it) is no chain head.
            const linked = Number.isSafeInteger(x.chain_seq) && x.chain_seq > 0 && typeof x.sha256 === 'string';
            this.addDecision(p.change, p.number, x.sequence, linked ? x.chain_seq : 0, linked ? x.sha256 : '');
        }
        else {
            bad('is not of a type the review index covers');
        }
    }
    /** The index of every record of REVIEW_TYPES (an open without a usable section, fsck). */
    static rebuild(entries) {
        const x = new ReviewIndex();
        for (const type of REVIEW_TYPES)
            for (const [id, body] of entries(type))
                x.addRecord(type, id, body);
        return x;
    }
    /** Reviews of a change (their sequences run from 1 to this). */
    reviewsOf(change) {
        return change > 0 && change <= this.maxChange ? this.reviewCount[change] : 0;
    }
    /** The latest review request of a change naming a group, or null. */
    requestOf(change) {
        if (change <= 0 || change > this.maxChange || this.requestReview[change] === 0)
            return null;
        return { review: this.requestReview[change], group: this.groups[this.requestGroup[change]], requested_at_s: this.requestAt[change] };
    }
    attestationsOf(change, number) {
        const s = this.slot(change, number, false);
        return s === 0 ? 0 : this.slotAttestations[s];
    }
    decisionsOf(change, number) {
        const s = this.slot(change, number, false);
        return s === 0 ? 0 : this.slotDecisions[s];
    }
    /**
     * The index as a checkpoint section (storage-layout.md §17.1), a function of the records
     * alone: review rows (bytes: i32 × 2 per change with reviews: change sequence, review count),
     * request rows (bytes: i32 × 3 per change with a group request: change sequence, review
     * sequence, group number), request times (bytes: f64 per request row), the group names the
     * request rows use (JSON bytes, sorted, each once; a row's group number indexes it), patchset
     * rows (bytes: i32 × 4 per patchset with an attestation or a decision: change sequence,
     * patchset number, attestation count, decision count), then the chain head: position u32 and
     * sha256 (bytes, UTF-8 hex; empty when none). Every row list in ascending order.
     */
    encode() {
        const reviews = [];
        const requests = [];
        const times = [];
        const patchsets = [];
        const used = new Map();
        for (let c = 1; c <= this.maxChange; c++) {
            if (this.reviewCount[c] > 0)
                reviews.push(c, this.reviewCount[c]);
            if (this.requestReview[c] > 0)
                used.set(this.groups[this.requestGroup[c]], 0);
            const rows = [];
            for (let s = this.firstSlot[c]; s !== 0; s = this.slotNext[s])
                rows.push([this.slotNumber[s], this.slotAttestations[s], this.slotDecisions[s]]);
            rows.sort((a, b) => a[0] - b[0]);
            for (const [n, a, d] of rows)
                patchsets.push(c, n, a, d);
        }
        const names = [...used.keys()].sort();
        names.forEach((name, i) => used.set(name, i));
        for (let c = 1; c <= this.maxChange; c++) {
            if (this.requestReview[c] === 0)
                continue;
            requests.push(c, this.requestReview[c], used.get(this.groups[this.requestGroup[c]]));
            times.push(this.requestAt[c]);
        }
        const u32 = (n) => {
            const b = Buffer.alloc(4);
            b.writeUInt32LE(n, 0);
            return b;
        };
        const bytes = (b) => [u32(b.length), b];
        const view = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
        return Buffer.concat([
            ...bytes(view(Int32Array.from(reviews))),
            ...bytes(view(Int32Array.from(requests))),
            ...bytes(view(Float64Array.from(times))),
            ...bytes(Buffer.from(JSON.stringify(names), 'utf8')),
            ...bytes(view(Int32Array.from(patchsets))),
            u32(this.chainSeq),
            ...bytes(Buffer.from(this.chainSha256, 'utf8')),
        ]);
    }
    /** The index read from a checkpoint section; throws when it does not decode or does not hold together. */
    static decode(buf) {
        const fail = (why) => { throw new Error(`section ${REVIEW_SECTION}: ${why}`); };
        let at = 0;
        const u32 = () => {
            if (at + 4 > buf.length)
                fail('ends early');
            at += 4;
            return buf.readUInt32LE(at - 4);
        };
        const bytes = () => {
            const n = u32();
            if (at + n > buf.length)
                fail('ends early');
            at += n;
            return buf.subarray(at - n, at);
        };
        const array = (make, size) => {
            const b = bytes();
            if (b.length % size)
                fail(`an array of ${size}-byte numbers has ${b.length} bytes`);
            const out = make(b.length / size);
            Buffer.from(out.buffer).set(b);
            return out;
        };
        const reviews = array(i32, 4);
        const requests = array(i32, 4);
        const times = array(f64, 8);
        let names;
        try {
            names = JSON.parse(bytes().toString('utf8'));
        }
        catch (err) {
            return fail(`group names: ${err.message}`);
        }
        const patchsets = array(i32, 4);
        const chainSeq = u32();
        const chainSha256 = bytes().toString('utf8');
        if (at !== buf.length)
            fail('bytes left over');
        if (reviews.length % 2 || requests.length % 3 || patchsets.length % 4)
            fail('a row list has a partial row');
        if (times.length !== requests.length / 3)
            fail(`${requests.length / 3} request rows and ${times.length} request times`);
        if (!Array.isArray(names) || !names.every((n) => typeof n === 'string'))
            fail('the group names are not a list of names');
        const groups = names;
        if (new Set(groups).size !== groups.length)
            fail('a group name appears twice');
        if (chainSeq === 0 && chainSha256 !== '')
            fail('a chain head sha256 without a chain position');
        const x = new ReviewIndex();
        let prev = 0;
        for (let i = 0; i < reviews.length; i += 2) {
            const [c, n] = [reviews[i], reviews[i + 1]];
            if (c <= prev || n <= 0)
                fail(`review row ${i / 2} is out of order or empty`);
            x.addReview(c, n, null);
            prev = c;
        }
        prev = 0;
        for (let i = 0; i < requests.length; i += 3) {
            const [c, seq, g] = [requests[i], requests[i + 1], requests[i + 2]];
            if (c <= prev || seq <= 0 || seq > x.reviewsOf(c) || g < 0 || g >= groups.length || !Number.isFinite(times[i / 3]))
                fail(`request row ${i / 3} is out of order or names no review`);
            x.addReview(c, seq, { group: groups[g], requested_at_s: times[i / 3] });
            prev = c;
        }
        let prevKey = [0, 0];
        for (let i = 0; i < patchsets.length; i += 4) {
            const [c, n, a, d] = [patchsets[i], patchsets[i + 1], patchsets[i + 2], patchsets[i + 3]];
            if (c < prevKey[0] || (c === prevKey[0] && n <= prevKey[1]) || c <= 0 || n <= 0 || a < 0 || d < 0 || a + d === 0)
                fail(`patchset row ${i / 4} is out of order or empty`);
            if (a > 0)
                x.addAttestation(c, n, a);
            if (d > 0)
                x.addDecision(c, n, d, 0, '');
            prevKey = [c, n];
        }
        x.chainSeq = chainSeq;
        x.chainSha256 = chainSha256;
        return x;
    }
    /** Bytes held by the typed arrays and the group names (memory tests and bench). */
    bytes() {
        const arrays = [this.reviewCount, this.requestReview, this.requestGroup, this.requestAt, this.firstSlot, this.slotNumber, this.slotNext, this.slotAttestations, this.slotDecisions];
        return arrays.reduce((n, a) => n + a.byteLength, 0) + this.groups.reduce((n, g) => n + 2 * g.length + 32, 0);
    }
}
//# sourceMappingURL=review-index.js.map