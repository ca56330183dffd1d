// The task read models of one authority (spec: "Tasks and read models"): the task audit, the
// queue summary and the task queue. Plain functions over the workflow book (./book.ts): they
// read its records and compact indexes and write nothing. It changes when a read model's rows
// or counts change, never with how the book stores or indexes records.
import { validateLineName } from '../../domain/lines.js';
import { zero } from '../../domain/workflow/indexes.js';
import { auditVerdict, CHANGE_STATUSES, isOpenChange, TASK_STATUSES } from '../../domain/workflow/rules.js';
/** The task audit: the task, its changes and the verdict against `targetLine`. */
export function taskAudit(book, ref, targetLine, repositoryIndex) {
    validateLineName(targetLine);
    const task = book.task(ref);
    const changes = book.changesOf(task.task_id);
    const open = changes.filter((c) => isOpenChange(c.status)).length;
    const landed = changes.filter((c) => c.status === 'landed' && c.land_target_line === targetLine).length;
    const line = book.line(targetLine);
    return {
        task: book.taskProjection(task, repositoryIndex),
        changes: changes.map((c) => book.changeProjection(c, repositoryIndex)),
        target_line: targetLine,
        target_line_exists: line !== undefined,
        target_line_head_snapshot_id: line?.head_snapshot_id ?? null,
        open_changes: open,
        landed_changes: landed,
        verdict: auditVerdict(task.status, open, landed),
    };
}
/** Aggregate counts, from the counters the book's indexes keep current by each commit. */
export function queueSummary(book, status) {
    const taskStatuses = status ? [status] : TASK_STATUSES;
    const tasks = zero(TASK_STATUSES);
    const changes = zero(CHANGE_STATUSES);
    for (const s of taskStatuses) {
        tasks[s] = book.index.taskCounts[s];
        for (const c of CHANGE_STATUSES)
            changes[c] += book.index.changeCounts[s][c];
    }
    const total = (o) => Object.values(o).reduce((a, b) => a + b, 0);
    const openChanges = changes.draft + changes.active + changes.review;
    return {
        status_filter: status ?? null,
        tasks: { ...tasks, total: total(tasks) },
        changes: { ...changes, open: openChanges, total: total(changes) },
    };
}
/** One page of rows, one per task (newest first), with its changes' states. */
export function taskQueue(book, status, req, repositoryIndex) {
    const page = book.pageTasks({ status }, req);
    return { next_cursor: page.next_cursor, rows: page.rows.map((t) => {
            const changes = book.changesOf(t.task_id);
            return {
                task_id: t.task_id,
                sequence: t.sequence,
                repository_index: repositoryIndex,
                title: t.title,
                status: t.status,
                plan_id: t.plan_id,
                plan_item_ref: t.plan_item_ref,
                created_at_s: t.created_at_s,
                updated_at_s: t.updated_at_s,
                change_count: changes.length,
                open_change_count: changes.filter((c) => isOpenChange(c.status)).length,
                landed_change_count: changes.filter((c) => c.status === 'landed').length,
                changes: changes.map((c) => ({
                    change_id: c.change_id,
                    change_ref: c.change_ref,
                    title: c.title,
                    status: c.status,
                    base_line: c.base_line,
                    patchset_count: c.patchset_count,
                    selected_patchset_id: c.selected_patchset_id,
                })),
            };
        }) };
}
//# sourceMappingURL=read-models.js.map