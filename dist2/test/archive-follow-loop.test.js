// A standby whose promotion fails goes back to following with exactly one polling loop: the
// loop the promotion stopped must not wake from its sleep and poll beside the one the failure
// starts. The archive is in memory; its listing of repositories (one call per poll round) can
// be held at a gate, so the test counts the rounds under way at once.
import { expect } from 'chai';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startServer } from '../lib/cli/serve.js';
import { MemoryObjectStore } from './memory-store.js';
import { api, tempDir, until } from './helpers.js';
/** The memory store, with a gate on the listing a poll round starts with. */
class GatedStore extends MemoryObjectStore {
    /** Listings of `repositories/` begun and finished. */
    begun = 0;
    finished = 0;
    /** Listings waiting at the closed gate now. */
    waiting = 0;
    gate = null;
    open = null;
    close() {
        this.gate = new Promise((resolve) => { this.open = resolve; });
    }
    release() {
        this.open?.();
        this.gate = null;
    }
    async list(prefix, options = {}) {
        if (prefix !== 'repositories/')
            return super.list(prefix, options);
        this.begun++;
        try {
            if (this.gate) {
                this.waiting++;
                try {
                    await this.gate;
                }
                finally {
                    this.waiting--;
                }
            }
            return await super.list(prefix, options);
        }
        finally {
            this.finished++;
        }
    }
}
describe('a failed promotion leaves one polling loop', function () {
    this.timeout(60_000);
    const INTERVAL = 1000;
    let store;
    let server;
    before(async () => {
        store = new GatedStore();
        server = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'standby'), log: pino({ level: 'silent' }), ui: false, follow: { url: 's3://standby-loop/team/', store, intervalMs: INTERVAL } });
        await server.ready;
    });
    after(async () => {
        store.release();
        await server.stop();
    });
    it('the loop the promotion stopped does not poll again after the promotion fails', async () => {
        // The first round is done: the loop sleeps INTERVAL before its next one.
        await until('the first poll round', () => store.finished >= 1 && store.finished === store.begun);
        // The promotion's own listing fails: it gives up and the standby follows again.
        store.inject({ op: 'list', keyPrefix: 'repositories/', kind: 'unavailable' });
        const res = await api(server.url, 'POST', '/archive/promote', { contract: false });
        expect(res.status, res.text).to.equal(503);
        expect(res.json.error).to.match(/^not promoted: .*still follows/);
        // Hold every round at its first listing and count the rounds that arrive there.
        store.close();
        await until('the restarted loop to poll', () => store.waiting >= 1);
        // Past the old loop's sleep (its timer fires before this one): with a second loop it would
        // be waiting at the gate too.
        await sleep(INTERVAL * 2);
        expect(store.waiting, 'poll rounds under way at once').to.equal(1);
        store.release();
        await until('the standby to follow again', async () => (await api(server.url, 'GET', '/healthz')).json.follow?.state === 'following');
        const write = await api(server.url, 'POST', '/v1/native/repository-authorities', { json: { repository_name: 'no', namespace: '', policy_flags: 0 }, contract: false });
        expect(write.status, write.text).to.equal(503);
    });
});
//# sourceMappingURL=archive-follow-loop.test.js.map