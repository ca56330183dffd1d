// Populate one change with comment records for bench/threads.ts, in a child process while the
// server is stopped:
//
//   node dist/bench/threads-populate.js DATA_DIR REPOSITORY_INDEX CHANGE_ID PATCHSET_ID COUNT
//
// Threads of five comments (a line thread on notes.md line 1..400 and four replies, the last
// of every second thread resolving it), written as the store's `comment` upserts, 500 to a
// transaction (HTTP would take one commit each). Prints one JSON line: the time.
import pino from 'pino';
import { CairnService } from '../lib/authority/service.js';
import { COMMENT, commentId } from '../lib/domain/workflow/comment-rules.js';
const [dataDir, repoArg, change, ps, countArg] = process.argv.slice(2);
const count = Number(countArg);
const t0 = performance.now();
const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
try {
    const a = await service.opened(Number(repoArg));
    const now = Math.floor(Date.now() / 1000);
    for (let start = 1; start <= count; start += 500) {
        await a.store.transact((tx) => {
            for (let k = start; k < start + 500 && k <= count; k++) {
                const inThread = (k - 1) % 5;
                const root = k - inThread;
                const c = {
                    comment_id: commentId(change, k),
                    change_id: change,
                    sequence: k,
                    patchset_id: ps,
                    author: inThread === 0 ? 'reviewer' : 'author',
                    anchor: { kind: 'lines', path: 'notes.md', side: 'revision', line: 1 + (root % 400), end_line: null },
                    in_reply_to: inThread === 0 ? null : commentId(change, k - 1),
                    body: `comment ${k}`,
                    resolution: inThread === 4 && root % 2 === 1 ? 'resolved' : null,
                    suggestion: null,
                    published: true,
                    created_at_s: now,
                    updated_at_s: now,
                };
                tx.upsert(COMMENT, c.comment_id, c);
            }
        });
    }
}
finally {
    service.close();
}
process.stdout.write(`${JSON.stringify({ ms: Math.round(performance.now() - t0) })}\n`);
//# sourceMappingURL=threads-populate.js.map