// Child process of test/review-records.test.ts: `ROOT` opens the authority at ROOT twice (the
// first open rebuilds the review index from the records and writes the checkpoint; the second
// reads it) and prints the memory the second open holds per review, attestation and decision,
// and what its review index names.
import { Authority } from '../lib/authority/authority.js';
import { silentLog } from '../lib/authority/logger.js';
const [root] = process.argv.slice(2);
const gc = globalThis.gc ?? (() => { });
const first = await Authority.open(root, 0, silentLog);
await first.store.writeCheckpoint();
first.close();
gc();
gc();
const before = process.memoryUsage();
const again = await Authority.open(root, 0, silentLog);
gc();
gc();
const after = process.memoryUsage();
const x = again.workflow.reviews.index;
const records = x.reviews + x.attestations + x.decisions;
const heap = after.heapUsed - before.heapUsed;
const buffers = after.arrayBuffers - before.arrayBuffers;
const groups = new Set();
for (let c = 1; c <= 1000; c++) {
    const r = x.requestOf(c);
    if (r)
        groups.add(r.group);
}
process.stdout.write(JSON.stringify({ bytes_per_record: (heap + buffers) / records, heap, buffers, index_bytes: x.bytes(), reviews: x.reviews, attestations: x.attestations, decisions: x.decisions, inbox_groups: groups.size }) + '\n');
again.close();
//# sourceMappingURL=review-records-child.js.map