// Child process of test/workflow-records.test.ts. `memory ROOT N`: opens the authority at ROOT
// twice (the first open may rebuild and write the checkpoint; the second reads it) and prints
// the memory the second open holds per task+change pair. `checkpoint ROOT`: opens it and writes
// a checkpoint (CAIRN_TEST_CRASH_AT kills it on the way).
import { Authority } from '../lib/authority/authority.js';
import { silentLog } from '../lib/authority/logger.js';
import { queueSummary } from '../lib/authority/workflow/read-models.js';

const [mode, root, n] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
if (mode === 'memory') {
  const first = await Authority.open(root, 0, silentLog);
  await first.store.writeCheckpoint();
  first.close();
  gc();
  gc();
  const before = process.memoryUsage();
  const again = await Authority.open(root, 0, silentLog);
  const notes: string[] = [];
  gc();
  gc();
  const after = process.memoryUsage();
  const pairs = Number(n);
  const heap = after.heapUsed - before.heapUsed;
  const buffers = after.arrayBuffers - before.arrayBuffers;
  const summary = queueSummary(again.workflow) as { tasks: { total: number }; changes: { total: number } };
  process.stdout.write(JSON.stringify({ bytes_per_pair: (heap + buffers) / pairs, heap, buffers, tasks: summary.tasks.total, changes: summary.changes.total, notes }) + '\n');
  again.close();
} else {
  const a = await Authority.open(root, 0, silentLog);
  await a.store.writeCheckpoint();
  a.close();
}
