// Populate a data directory with workflow records for bench/workflow-scale.ts, in a child
// process (the records stay in this process's memory while it writes, not in the bench's).
//
//   node dist/bench/workflow-populate.js DATA_DIR REPOSITORIES PAIRS_PER_REPOSITORY
//
// Each repository is registered through the service (as POST repository-authorities does),
// gets an empty `main` line (as PUT lines/main with head_snapshot_id null does), then
// task+change pairs: each pair is the task the tasks.create handler writes and the change the
// changes.create handler writes (the WorkflowBook's own staging code, so the records, the
// counters and the events are the real ones), one pair per transaction with hundreds of
// transactions in flight so group commit folds their fsyncs. Prints one JSON line: the time.
import pino from 'pino';
import { CairnService } from '../lib/authority/service.js';
const [dataDir, reposArg, pairsArg] = process.argv.slice(2);
const repositories = Number(reposArg);
const pairs = Number(pairsArg);
/** Transactions queued at once: group commit folds up to 256 of them into one commit. */
const IN_FLIGHT = Number(process.env.BENCH_SCALE_IN_FLIGHT || 512);
/**
 * `count` pairs, one pair per transaction as real traffic writes them (so each pair is its own
 * workflow.log record and a read parses one small record), IN_FLIGHT transactions queued at once.
 */
async function populate(a, count, progress) {
    const pending = new Set();
    let done = 0;
    for (let k = 1; k <= count; k++) {
        const p = a.store
            .transact((tx) => {
            const title = `Task ${k}: tidy the parser's error paths`;
            // What tasks.create does: validated text, linkage resolved against the plans, one staged task.
            const task = a.workflow.createTaskIn(tx, { title, intent: `Make the error path of step ${k} say which input it refused and why.` }, a.plans.resolveLinkage({}));
            // What changes.create does (its own request in real traffic; here the same transaction).
            a.workflow.createChangeIn(tx, { task_id: task.task_id, title: `First cut of task ${k}`, base_line: 'main' }, `First cut of task ${k}`);
        })
            .then(() => {
            pending.delete(p);
            done++;
            if (done % 1000 === 0)
                progress?.(done);
        });
        pending.add(p);
        if (pending.size >= IN_FLIGHT)
            await Promise.race(pending);
    }
    await Promise.all(pending);
}
const t0 = performance.now();
const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
try {
    let lastReport = performance.now();
    for (let r = 0; r < repositories; r++) {
        const { record } = await service.register(`scale-${r}`, '', 0);
        const index = record.repository_index;
        const a = service.authority(index); // registration opened it
        await a.content.putLine('main', { head_snapshot_id: null });
        await populate(a, pairs, (done) => {
            if (repositories === 1 && performance.now() - lastReport > 10_000) {
                lastReport = performance.now();
                process.stderr.write(`» populate: ${done} of ${pairs} pairs, ${Math.round((performance.now() - t0) / 1000)} s\n`);
            }
        });
        // Many repositories: keep only one open at a time (as a lazily opening server would).
        if (repositories > 1)
            service.closeAuthority(index);
    }
}
finally {
    service.close();
}
process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - t0), repositories, pairs_per_repository: pairs })}\n`);
//# sourceMappingURL=workflow-populate.js.map