// The land queue's rules (docs/land-queue.md): what the queue of one target line does next,
// decided from its entry records, the line head and the states of its CI jobs. Pure: the
// authority (lib/authority/workflow/land-queue.ts) applies the one move this returns as one
// transaction and asks again, so every move is a commit of its own and the queue resumes from
// its records after a crash.
//
// Speculation: the first `depth` entries are tested on the trees they would land: entry k's
// speculative snapshot is entry k-1's (or the line head for the first) merged with entry k's
// patchset, built by the land's own merge code. Each entry records the snapshot its speculation
// starts from (`base_snapshot_id`), so a chain is valid exactly while the first entry's base is
// the line head and every later entry's base is the snapshot of the entry before it.
import { Invalid } from '../errors.js';
export const QUEUE_ENTRY = 'land_queue_entry';
/** The workflow.ckpt section of the active entries. */
export const QUEUE_SECTION = 'land-queue';
export const QUEUE_MODES = ['merge', 'direct'];
/** `queued` (waiting for a speculation), `testing` (speculation built, CI pending or failed with retries left), terminal: `landed`, `ejected`, `removed`. */
export const QUEUE_STATES = ['queued', 'testing', 'landed', 'ejected', 'removed'];
export const EJECTION_REASONS = ['ci_failed', 'conflict', 'gates', 'change_not_landable', 'patchset_changed', 'line_unavailable'];
export const DEFAULT_QUEUE_OPTIONS = { depth: 4, retries: 1, batch: 1, stall_s: 900 };
export function checkQueueOptions(o) {
    const int = (v, name, lo, hi) => {
        if (!Number.isInteger(v) || v < lo || v > hi)
            throw new Invalid(`${name} must be an integer from ${lo} to ${hi}`);
    };
    int(o.depth, 'queue depth', 1, 64);
    int(o.retries, 'queue retries', 0, 10);
    int(o.batch, 'queue batch', 1, 64);
    int(o.stall_s, 'queue stall seconds', 1, 86_400);
    return o;
}
export const isActiveEntry = (e) => e.state === 'queued' || e.state === 'testing';
/**
 * Why writing a change from `before` to `after` takes its active entry out of the queue in that
 * same commit: a new patchset was pushed (the current one moved), or another was selected. The
 * queued patchset is then no longer what its author means to land. Null when neither moved.
 */
export function patchsetEjection(entry, before, after) {
    if (after.current_patchset_id !== before.current_patchset_id && after.current_patchset_id !== entry.patchset_id) {
        return { reason: 'patchset_changed', message: `patchset ${after.current_patchset_id} was pushed to change ${after.change_id} after ${entry.patchset_id} was queued; select the patchset to land and queue the change again` };
    }
    if (after.selected_patchset_id !== entry.patchset_id) {
        return { reason: 'patchset_changed', message: `change ${after.change_id} selected patchset ${after.selected_patchset_id} after ${entry.patchset_id} was queued; queue it again` };
    }
    return null;
}
/** The verdict of a speculation's CI: its reused evidence, else its newest job. */
export function speculationVerdict(spec, job) {
    if (spec.reused_worker_job_index !== null)
        return 'pass';
    const last = spec.worker_job_indexes.at(-1);
    if (last === undefined)
        return 'pending';
    return job(last)?.verdict ?? 'fail';
}
/** The next move of one line's queue, or null when it waits (for CI, for entries). */
export function nextQueueMove(f, o) {
    const entries = f.entries;
    if (entries.length === 0)
        return null;
    if (f.line_problem !== null)
        return { kind: 'eject', entry: entries[0], reason: 'line_unavailable', message: f.line_problem };
    for (const e of entries) {
        const why = f.unlandable(e);
        if (why)
            return { kind: 'eject', entry: e, ...why };
    }
    if (f.head === null)
        return { kind: 'eject', entry: entries[0], reason: 'line_unavailable', message: `line ${entries[0].target_line} is empty; a land needs a head to land onto` };
    // The valid chain: entries whose speculation starts where the one before ends.
    const byId = new Map(entries.map((e) => [e.entry_id, e]));
    let prev = f.head;
    let chain = 0;
    for (; chain < entries.length; chain++) {
        const spec = entries[chain].speculation;
        if (spec === null || spec.base_snapshot_id !== prev)
            break;
        const tester = byId.get(spec.tested_by);
        if (!tester?.speculation || !tester.speculation.covers.includes(entries[chain].entry_id))
            break;
        prev = spec.snapshot_id;
    }
    const stale = entries.slice(chain).filter((e) => e.speculation !== null);
    if (stale.length)
        return { kind: 'reset', entries: stale };
    // From here on entries[0..chain) have valid speculations and none after them has one.
    if (chain > 0) {
        const front = entries[0];
        const tester = byId.get(front.speculation.tested_by);
        const verdict = speculationVerdict(tester.speculation, f.job);
        if (verdict === 'pass') {
            const evidence = tester.speculation.reused_worker_job_index ?? tester.speculation.worker_job_indexes.at(-1);
            return { kind: 'land', entry: front, evidence_job: evidence };
        }
    }
    // Failed speculations: retry while runs are left. Then a batch at the front is bisected and a
    // single entry at the front ejected; one behind waits, as its failure may come from an entry
    // ahead of it (which, ejected, restarts the speculations behind).
    for (let i = 0; i < chain; i++) {
        const e = entries[i];
        const spec = e.speculation;
        if (spec.tested_by !== e.entry_id || speculationVerdict(spec, f.job) !== 'fail')
            continue;
        if (spec.worker_job_indexes.length < 1 + o.retries)
            return { kind: 'retry', entry: e };
        const start = i - spec.covers.length + 1;
        if (start !== 0)
            continue;
        const batch = entries.slice(0, i + 1);
        if (batch.length > 1)
            return { kind: 'bisect', batch, behind: entries.slice(i + 1).filter((x) => x.speculation !== null) };
        return { kind: 'eject_failed', entry: e, jobs: spec.worker_job_indexes };
    }
    // A job that has not progressed within the bound is reported once.
    for (let i = 0; i < chain; i++) {
        const spec = entries[i].speculation;
        if (spec.tested_by !== entries[i].entry_id || spec.stalled_at_s !== null)
            continue;
        const last = spec.worker_job_indexes.at(-1);
        const j = last === undefined ? null : f.job(last);
        if (j && j.verdict === 'pending' && f.now_s - j.updated_at_s > o.stall_s)
            return { kind: 'stalled', entry: entries[i], worker_job_index: last };
    }
    // Build the next batch within the window.
    const depth = Math.max(o.depth, o.batch);
    if (chain < entries.length && chain < depth) {
        const first = entries[chain];
        const limit = Math.min(o.batch, first.batch_limit ?? o.batch, depth - chain);
        const batch = [first];
        for (let i = chain + 1; i < entries.length && batch.length < limit && entries[i].batch_limit === null; i++)
            batch.push(entries[i]);
        return { kind: 'build', entries: batch, base: prev, ahead: entries.slice(0, chain).map((e) => e.entry_id) };
    }
    return null;
}
/** The batch limits a bisection sets: the failed batch's halves each start a smaller batch. */
export function bisectLimits(batch) {
    const half = Math.ceil(batch.length / 2);
    const out = new Map();
    out.set(batch[0].entry_id, half);
    if (batch.length > 1)
        out.set(batch[half].entry_id, batch.length - half);
    return out;
}
/**
 * The entries the checkpoint section names (storage-layout.md §17.1): every active entry, and
 * each change's latest entry when it was ejected (whose move it is depends on it: docs/api.md
 * "People"), as ascending sequences.
 */
export function queueSectionSequences(entries) {
    const latest = new Map();
    const out = new Set();
    for (const e of entries) {
        if (isActiveEntry(e))
            out.add(e.sequence);
        const l = latest.get(e.change_id);
        if (!l || l.sequence < e.sequence)
            latest.set(e.change_id, e);
    }
    for (const e of latest.values())
        if (e.state === 'ejected')
            out.add(e.sequence);
    return [...out].sort((a, b) => a - b);
}
/** The checkpoint section (storage-layout.md §17.1): u32 count, then the named entries' sequences (u32 LE, ascending). */
export function encodeActive(seqs) {
    const b = Buffer.alloc(4 + 4 * seqs.length);
    b.writeUInt32LE(seqs.length, 0);
    seqs.forEach((s, i) => b.writeUInt32LE(s, 4 + 4 * i));
    return b;
}
export function decodeActive(b) {
    if (b.length < 4)
        throw new Error('land-queue section is shorter than its count');
    const n = b.readUInt32LE(0);
    if (b.length !== 4 + 4 * n)
        throw new Error(`land-queue section holds ${b.length} bytes, not ${4 + 4 * n}`);
    const out = [];
    for (let i = 0; i < n; i++) {
        const s = b.readUInt32LE(4 + 4 * i);
        if (s === 0 || (i > 0 && s <= out[i - 1]))
            throw new Error('land-queue section sequences are not ascending');
        out.push(s);
    }
    return out;
}
//# sourceMappingURL=land-queue.js.map