// The land queue (extension routes; docs/land-queue.md): enqueue a change, list the queue of a
// line in order with each entry's state and CI, read one entry, remove one. The moves of the
// queue (speculations, CI, lands, ejections) are made by the server, never by a request.
import { boolean, enums, nullable, object, optional, string } from 'superstruct';
import { EJECTION_REASONS, QUEUE_MODES, QUEUE_STATES } from '../../domain/workflow/land-queue.js';
import { validateLineName } from '../../domain/lines.js';
import { arr, bool, enumOf, hex64, nullable as orNull, obj, ref, str, strArr, uint } from '../json-schema.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
import { identityOf, queryValue } from './workflow-common.js';
/** Unknown fields are refused (422). */
export const Enqueue = object({ change_ref: string(), mode: enums([...QUEUE_MODES]), target_line: optional(nullable(string())), bypass: optional(nullable(boolean())) });
export const ListQuery = {
    target_line: { schema: str, description: 'only the queue of this line' },
};
/** Finished entries a list shows after the active ones. */
const RECENT_FINISHED = 20;
export const enqueue = async (ctx) => {
    const req = validate(ctx.body, Enqueue);
    const a = requireAuthority(ctx);
    const entry = await a.queue.enqueue(req, identityOf(ctx));
    // The land itself comes later (the repository's land.bypassed event names it); the request is audited now.
    if (req.bypass === true)
        await ctx.access?.book.audit(identityOf(ctx), 'land.bypass_queued', { repository_index: a.index, change_ref: req.change_ref ?? null });
    return { status: 201, json: { entry: a.queue.projection(entry, a.index) } };
};
export const list = async (ctx) => {
    const a = requireAuthority(ctx);
    const line = queryValue(ctx, 'target_line');
    if (line !== undefined)
        validateLineName(line);
    const active = a.queue.activeEntries(line);
    return {
        json: {
            target_line: line ?? null,
            entries: active.map((e) => a.queue.projection(e, a.index)),
            count: active.length,
            recent: a.queue.recentFinished(RECENT_FINISHED, line).map((e) => a.queue.projection(e, a.index)),
        },
    };
};
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { entry: a.queue.projection(a.queue.entry(ctx.params.entry_id), a.index) } };
};
export const remove = async (ctx) => {
    const a = requireAuthority(ctx);
    const entry = await a.queue.remove(ctx.params.entry_id);
    return { json: { entry: a.queue.projection(entry, a.index) } };
};
const speculation = obj({
    base_snapshot_id: { ...hex64, description: 'the line head, or the speculative snapshot of the entry ahead' },
    snapshot_id: { ...hex64, description: 'base + this entry: what lands when its CI passes' },
    root_tree_id: hex64,
    line_action: enumOf(['fast_forward', 'merge', 'direct']),
    ahead: { ...strArr, description: 'entries held in this snapshot ahead of this one, in queue order' },
    tested_by: { ...str, description: 'the entry whose CI job tests this snapshot (itself unless batched)' },
    covers: { ...strArr, description: 'on the testing entry: the entries its job covers; empty on the others' },
    worker_job_indexes: { ...arr(uint), description: 'repo.ci jobs on this snapshot, oldest first (a retry appends)' },
    reused_worker_job_index: { ...orNull(uint), description: 'a passed run of an identical root tree used instead of a new run' },
    built_at_s: uint,
    stalled_at_s: orNull(uint),
});
export const SCHEMAS = {
    LandQueueEntry: obj({
        entry_id: { ...str, description: 'lq-<sequence>' },
        sequence: uint,
        version: { ...uint, description: 'bumped by every move of the entry' },
        repository_index: uint,
        change_id: str,
        change_ref: str,
        task_id: str,
        patchset_id: { ...str, description: 'the selected patchset when queued; selecting another ejects the entry' },
        target_line: str,
        mode: enumOf(QUEUE_MODES),
        state: enumOf(QUEUE_STATES),
        position: { ...orNull(uint), description: '1 for the front of its line; null once finished' },
        speculation: orNull(speculation),
        ci: orNull(obj({
            verdict: enumOf(['pass', 'fail', 'pending']),
            tested_by: str,
            worker_job_index: orNull(uint),
            job_state: orNull(enumOf(['queued', 'running', 'succeeded', 'failed'])),
            runs: { ...uint, description: 'CI runs on this speculation (a retry adds one)' },
            reused: bool,
        })),
        stalled: { ...orNull(obj({ since_s: uint, worker_job_index: uint, message: str })), description: 'the CI job has not progressed within the stall bound' },
        batch_limit: { ...orNull(uint), description: 'set by a bisection: the batch starting here holds at most this many entries' },
        passed_on_retry: bool,
        land_id: orNull(str),
        landed_snapshot_id: orNull(hex64),
        ejection: orNull(obj({
            reason: enumOf(EJECTION_REASONS),
            message: str,
            worker_job_indexes: arr(uint),
            failing_suites: strArr,
            conflict_paths: { ...strArr, description: 'at most 100 listed' },
        })),
        enqueued_by: { ...orNull(str), description: 'who queued it: the caller the trusted ingress named (docs/api.md "People"); the landed_by of the land it makes. Null when the request named no one' },
        bypass: { ...bool, description: 'queued with "bypass": true by a caller in bypass_allowed: its land bypasses failing gates as that caller (docs/api.md "Repository rules")' },
        enqueued_at_s: uint,
        updated_at_s: uint,
        finished_at_s: orNull(uint),
    }),
    LandQueueEntryResult: obj({ entry: ref('LandQueueEntry') }),
    LandQueueList: obj({
        target_line: orNull(str),
        entries: { ...arr(ref('LandQueueEntry')), description: 'active entries (queued, testing) in queue order, per line' },
        count: uint,
        recent: { ...arr(ref('LandQueueEntry')), description: `the newest finished entries (landed, ejected, removed), newest first, at most ${RECENT_FINISHED}` },
    }),
};
//# sourceMappingURL=land-queue.js.map