// Child process of test/workflow-records.test.ts. `memory ROOT N`: opens the authority at ROOT
// twice (the first open may rebuild and write the checkpoint; the second reads it) and prints
// the memory the second open holds per task+change pair. `checkpoint ROOT`: opens it and writes
// a checkpoint (CAIRN_TEST_CRASH_AT kills it on the way). `compact ROOT`: compacts workflow.log
// with commits before its snapshot and before its tail copy, printing each acknowledged one
// (CAIRN_TEST_CRASH_AT kills it on the way).
import { Authority } from '../lib/authority/authority.js';
import { silentLog } from '../lib/authority/logger.js';
import { queueSummary } from '../lib/authority/workflow/read-models.js';
import { ContentStore } from '../lib/store/content-store.js';
const [mode, root, n] = process.argv.slice(2);
const gc = globalThis.gc ?? (() => { });
if (mode === 'memory') {
    const first = await Authority.open(root, 0, silentLog);
    await first.store.writeCheckpoint();
    first.close();
    gc();
    gc();
    const before = process.memoryUsage();
    const again = await Authority.open(root, 0, silentLog);
    const notes = [];
    gc();
    gc();
    const after = process.memoryUsage();
    const pairs = Number(n);
    const heap = after.heapUsed - before.heapUsed;
    const buffers = after.arrayBuffers - before.arrayBuffers;
    const summary = queueSummary(again.workflow);
    process.stdout.write(JSON.stringify({ bytes_per_pair: (heap + buffers) / pairs, heap, buffers, tasks: summary.tasks.total, changes: summary.changes.total, notes }) + '\n');
    again.close();
}
else if (mode === 'compact') {
    const { store } = await ContentStore.open(root);
    let n = 0;
    const commit = async () => {
        n++;
        await store.transact((tx) => {
            tx.setLine({ name: 'main', status: 'active', head_snapshot_id: null, updated_at_s: 5000 + n });
            tx.upsert('probe', 'p-0', { v: n });
            tx.upsert('probe', `p-${n}`, { v: n });
        });
        process.stdout.write(JSON.stringify({ acked: n }) + '\n');
    };
    store.compactionPause = async () => {
        await commit();
        await commit();
    };
    process.stdout.write(JSON.stringify({ note: await store.compactWorkflow() }) + '\n');
    store.close();
}
else {
    const a = await Authority.open(root, 0, silentLog);
    await a.store.writeCheckpoint();
    a.close();
}
//# sourceMappingURL=workflow-records-child.js.map