// Populate a data directory for bench/search.ts, in a child process: one repository of N
// changes (one task per 100 changes), titles drawn from a seeded vocabulary (a common verb, a
// noun of 400, an area of 40 and one word of 20,000), each change with one patchset whose diff
// records 1–8 paths under 40 top directories of 10 subdirectories each (the WorkflowBook's own
// staging code writes the change and the patchset; the diff is generated, no snapshot is read),
// all active. Many transactions in flight so group commit folds fsyncs.
//
//   node dist/bench/search-populate.js DATA_DIR CHANGES
import pino from 'pino';
import { CairnService } from '../lib/authority/service.js';
const [dataDir, changesArg] = process.argv.slice(2);
const changes = Number(changesArg);
const IN_FLIGHT = 512;
// mulberry32: a seeded PRNG whose low bits are as random as its high ones.
let seed = 0x5eed;
const rnd = (n) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) % n);
};
const VERBS = ['fix', 'add', 'speed up', 'refactor', 'document', 'remove', 'test', 'rename'];
export const NOUN = (i) => `noun${i}`;
export const RARE = (i) => `rare${i}`;
export const AREA = (i) => `area${i}`;
const ZERO = '0'.repeat(64);
function diffOf() {
    const n = 1 + rnd(8);
    const files = [];
    const seen = new Set();
    for (let i = 0; i < n; i++) {
        const path = `dir${rnd(40)}/sub${rnd(10)}/file${rnd(1000)}.ts`;
        if (seen.has(path))
            continue;
        seen.add(path);
        files.push({ path, change: 'modified', old_kind: 'file', new_kind: 'file', mode_changed: false, content_changed: true, old_bytes: 100, new_bytes: 120, lines_added: 2, lines_removed: 1, binary: false });
    }
    files.sort((a, b) => (a.path < b.path ? -1 : 1));
    return {
        stats: { files_changed: files.length, files_added: 0, files_modified: files.length, files_deleted: 0, mode_only: 0, symlinks_changed: 0, bytes_before: 100 * files.length, bytes_after: 120 * files.length, lines_added: 2 * files.length, lines_removed: files.length, lines_complete: true },
        files,
        files_truncated: false,
    };
}
const t0 = performance.now();
const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
try {
    const { record } = await service.register('search', '', 0);
    const a = service.authority(record.repository_index);
    await a.content.putLine('main', { head_snapshot_id: null });
    let task = '';
    const pending = new Set();
    for (let k = 1; k <= changes; k++) {
        if ((k - 1) % 100 === 0) {
            // Tasks first, in order (changes name them).
            await Promise.all(pending);
            task = (await a.store.transact((tx) => a.workflow.createTaskIn(tx, { title: `Task ${k}`, intent: 'search bench' }, a.plans.resolveLinkage({})))).task_id;
        }
        const title = `${VERBS[rnd(VERBS.length)]} ${NOUN(rnd(400))} in ${AREA(rnd(40))} ${RARE(rnd(20_000))}`;
        const diff = diffOf();
        const p = a.store
            .transact((tx) => {
            const c = a.workflow.createChangeIn(tx, { task_id: task, title, base_line: 'main' }, title);
            a.workflow.stagePatchset(tx, c, { base_snapshot_id: ZERO, revision_snapshot_id: ZERO, summary: title, author_mode: 'human_only' }, diff);
        })
            .then(() => { pending.delete(p); });
        pending.add(p);
        if (pending.size >= IN_FLIGHT)
            await Promise.race(pending);
    }
    await Promise.all(pending);
}
finally {
    await service.close();
}
process.stdout.write(JSON.stringify({ ms: Math.round(performance.now() - t0) }) + '\n');
//# sourceMappingURL=search-populate.js.map