// EventIndex (lib/store/event-log.ts): reads by sequence and by time, from the recent tail kept
// in memory and from the log through the sparse index (after a reopen), before and after
// retention trimmed the oldest events.
import { expect } from 'chai';
import { ContentStore } from '../lib/store/content-store.js';
import { tempDir } from './helpers.js';
/** Commit `sizes.length` batches, batch i holding sizes[i] events; every batch gets its own time. */
async function commitBatches(store, sizes) {
    for (const [b, size] of sizes.entries()) {
        await store.transact((tx) => {
            for (let k = 0; k < size; k++)
                tx.emit('line.created', { line: `b${b}-${k}`, head_snapshot_id: null });
        });
    }
}
/** firstAtOrAfter agrees with a plain scan of `all` for every time around every batch. */
function expectTimeLookups(store, all) {
    const index = store.events;
    const kept = all.filter((e) => e.seq >= index.oldestSeq);
    const firstAtOrAfter = (t) => kept.find((e) => e.at_us >= t)?.seq ?? index.lastSeq + 1;
    const times = [...new Set(all.map((e) => e.at_us))];
    for (const t of [0, ...times.flatMap((x) => [x - 1, x, x + 1])]) {
        expect(index.firstAtOrAfter(t), `time ${t}`).to.equal(firstAtOrAfter(t));
    }
    expect(index.oldestAtUs).to.equal(kept[0]?.at_us ?? null);
}
describe('EventIndex: reads by sequence and by time', function () {
    this.timeout(60_000);
    it('finds the first event at or after a time, from the recent tail and through the sparse index', async () => {
        const root = tempDir();
        // 100 batches of 1 to 3 events: 199 events, four sparse-index entries (one per 64).
        const sizes = Array.from({ length: 100 }, (_, i) => 1 + (i % 3));
        let { store } = await ContentStore.open(root);
        try {
            expect(store.events.firstAtOrAfter(0)).to.equal(1);
            expect(store.events.oldestAtUs).to.equal(null);
            await commitBatches(store, sizes);
            const all = store.events.read(0, 1000);
            expect(all.map((e) => e.seq)).to.deep.equal(Array.from({ length: 199 }, (_, i) => i + 1));
            // Times are one per batch and increase from batch to batch.
            expect(new Set(all.map((e) => e.at_us)).size).to.equal(100);
            for (let i = 1; i < all.length; i++)
                expect(all[i].at_us).to.be.at.least(all[i - 1].at_us);
            expectTimeLookups(store, all);
            store.close();
            // Reopened: nothing is in the recent tail, every lookup goes through the sparse index.
            ({ store } = await ContentStore.open(root));
            expect(store.events.read(0, 1000)).to.deep.equal(all);
            expectTimeLookups(store, all);
            expect(store.events.read(130, 5).map((e) => e.seq)).to.deep.equal([131, 132, 133, 134, 135]);
            // Retention: the oldest 149 dropped; lookups start at the oldest kept event.
            expect(await store.trimEvents(50)).to.equal(149);
            expect(store.events.oldestSeq).to.equal(150);
            expect(store.events.read(149, 1000)).to.deep.equal(all.slice(149));
            expectTimeLookups(store, all);
            await commitBatches(store, [2, 1]);
            const more = store.events.read(199, 10);
            expect(more.map((e) => e.seq)).to.deep.equal([200, 201, 202]);
            expectTimeLookups(store, [...all, ...more]);
            store.close();
            ({ store } = await ContentStore.open(root));
            expect(store.events.oldestSeq).to.equal(150);
            expectTimeLookups(store, [...all, ...more]);
        }
        finally {
            store.close();
        }
    });
});
//# sourceMappingURL=event-index.test.js.map