// The derived thread summary (lib/domain/workflow/thread-summary.ts) against foldThreads, the
// rule it stands in for: after any sequence of new threads, replies, resolutions, drafts and
// publishes, edits and discards of drafts, kept current record by record or rebuilt from the records, it names the same
// threads, members, resolutions and unresolved count for every viewer (fast-check).
import { expect } from 'chai';
import fc from 'fast-check';
import { commentId, foldThreads } from '../lib/domain/workflow/comment-rules.js';
import { ThreadSummary } from '../lib/domain/workflow/thread-summary.js';
const AUTHORS = ['ann', 'bob', 'cy'];
const CHANGE = 'change-1';
const resolution = fc.constantFrom(null, null, 'resolved', 'unresolved');
const opArb = fc.oneof(fc.record({ op: fc.constant('root'), author: fc.nat(2), draft: fc.boolean(), resolution }), fc.record({ op: fc.constant('reply'), to: fc.nat(200), author: fc.nat(2), draft: fc.boolean(), resolution }), fc.record({ op: fc.constant('publish'), author: fc.nat(2) }), fc.record({ op: fc.constant('edit'), which: fc.nat(200), resolution }), fc.record({ op: fc.constant('discard'), which: fc.nat(200) }));
function check(summary, records) {
    for (const viewer of [null, ...AUTHORS]) {
        const folded = foldThreads(records, viewer);
        const seen = summary.visible(viewer);
        expect(seen.map((t) => commentId(CHANGE, t.seq)), `threads for ${viewer}`).to.deep.equal(folded.threads.map((t) => t.thread_id));
        seen.forEach((t, i) => {
            const f = folded.threads[i];
            expect(t.resolution, `resolution of ${f.thread_id}`).to.equal(f.resolution);
            expect(summary.membersSeen(t, viewer).map((m) => commentId(CHANGE, m)), `members of ${f.thread_id}`).to.deep.equal([f.root, ...f.replies].map((r) => r.comment_id));
        });
        if (viewer === null)
            expect(summary.unresolved, 'unresolved').to.equal(folded.unresolved);
    }
    expect(summary.count).to.equal(records.length);
}
describe('thread summary: agrees with foldThreads', () => {
    it('property: kept current record by record, or rebuilt from the records, after any valid history', () => {
        fc.assert(fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
            const records = [];
            const live = new ThreadSummary();
            const write = (r) => {
                const i = records.findIndex((x) => x.comment_id === r.comment_id);
                if (i >= 0)
                    records[i] = r;
                else
                    records.push(r);
                live.apply(r);
            };
            for (const o of ops) {
                if (o.op === 'publish') {
                    for (const d of records.filter((r) => !r.published && !r.discarded && r.author === AUTHORS[o.author]))
                        write({ ...d, published: true });
                    continue;
                }
                // An author edits (a new resolution) or discards one of their live drafts, in place.
                if (o.op === 'edit' || o.op === 'discard') {
                    const drafts = records.filter((r) => !r.published && !r.discarded);
                    if (drafts.length === 0)
                        continue;
                    const d = drafts[o.which % drafts.length];
                    write(o.op === 'edit' ? { ...d, resolution: o.resolution } : { ...d, body: '', suggestion: null, discarded: true });
                    continue;
                }
                let inReplyTo = null;
                if (o.op === 'reply') {
                    // Replies answer published comments (the create rules refuse a draft parent).
                    const targets = records.filter((r) => r.published);
                    if (targets.length === 0)
                        continue;
                    inReplyTo = targets[o.to % targets.length].comment_id;
                }
                const sequence = records.length + 1;
                write({
                    comment_id: commentId(CHANGE, sequence), change_id: CHANGE, sequence, patchset_id: `${CHANGE}.ps-1`, author: AUTHORS[o.author],
                    anchor: { kind: 'patchset' }, in_reply_to: inReplyTo, body: 'b', resolution: o.resolution, suggestion: null,
                    published: !o.draft, created_at_s: 0, updated_at_s: 0,
                });
            }
            check(live, records);
            check(ThreadSummary.of(records), records);
        }), { numRuns: 300 });
    });
});
//# sourceMappingURL=thread-summary.test.js.map