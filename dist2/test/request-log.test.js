// The serve log path (part of every request's cost): the request line written by
// lib/cli/request-log.ts must be byte for byte what pino writes for log.info(entry, 'request'),
// and lib/cli/log-batch.ts must pass every line on, in order, and write all of it on exit.
import { expect } from 'chai';
import path from 'node:path';
import { pino } from 'pino';
import { LogLineBatch } from '../lib/cli/log-batch.js';
import { jsonRequestLog } from '../lib/cli/request-log.js';
import { api, spawnServer, tempDir } from './helpers.js';
const TIME = 1_700_000_001_234;
const ENTRIES = [
    { method: 'GET', route: '/v1/native/repository-authorities/{repository_index}/lines', operation: 'lines.list', status: 200, ms: 0.123456 },
    { method: 'POST', route: '/v1/native/repository-authorities/{repository_index}/tasks/{task_id}:land', operation: 'tasks.land', status: 409, ms: 12 },
    { method: 'DELETE', route: null, operation: null, status: 404, ms: 1e-7 },
    { method: 'PUT', route: 'a "quoted" \\ route\n\u0001 é \ud800', operation: 'odd', status: 500, ms: 3.5 },
];
function collect() {
    let text = '';
    return { sink: { write: (s) => { text += s; return true; } }, text: () => text };
}
describe('serve request log line (lib/cli/request-log.ts)', () => {
    it('writes exactly the bytes pino writes for log.info(entry, "request")', () => {
        const base = { service: 'cairn' };
        const viaPino = collect();
        const log = pino({ level: 'info', base, timestamp: () => `,"time":${TIME}` }, viaPino.sink);
        const fast = collect();
        const requestLog = jsonRequestLog({ level: 'info', base, sink: fast.sink, now: () => TIME });
        for (const e of ENTRIES) {
            log.info(e, 'request');
            requestLog(e);
        }
        expect(fast.text()).to.equal(viaPino.text());
        expect(fast.text().split('\n').filter(Boolean).map((l) => JSON.parse(l).operation)).to.deep.equal(['lines.list', 'tasks.land', null, 'odd']);
    });
    it('follows the level: debug and info write, warn and silent do not', () => {
        for (const [level, writes] of [['debug', true], ['info', true], ['warn', false], ['silent', false]]) {
            const out = collect();
            jsonRequestLog({ level, base: {}, sink: out.sink })(ENTRIES[0]);
            expect(out.text() !== '', level).to.equal(writes);
        }
    });
});
describe('log line batch (lib/cli/log-batch.ts)', () => {
    it('hands lines on in order once a batch is full, and everything on flush', () => {
        const writes = [];
        let synced = 0;
        const syncWrites = [];
        const batch = new LogLineBatch({ write: (s) => { writes.push(s); return true; }, flushSync: () => { synced++; }, writeSync: (s) => { syncWrites.push(s); } }, 10);
        batch.write('aaaa\n');
        expect(writes).to.deep.equal([]);
        batch.write('bbbbb\n'); // 11 chars ≥ 10: handed on as one write
        expect(writes).to.deep.equal(['aaaa\nbbbbb\n']);
        batch.write('c\n');
        batch.flush();
        batch.flush(); // nothing waits: no empty write
        batch.write('d\n');
        batch.write('e\n');
        batch.flushSync(); // on exit: written synchronously, never as an asynchronous write
        expect(writes).to.deep.equal(['aaaa\nbbbbb\n', 'c\n']);
        expect(syncWrites).to.deep.equal(['d\ne\n']);
        batch.flushSync(); // nothing waits: the sink flushes what it holds
        expect(synced).to.equal(1);
    });
    it('a server stopped right after many requests has logged every one of them', async function () {
        this.timeout(30_000);
        const server = await spawnServer(path.join(tempDir(), 'data'), ['--log-format', 'json']);
        const url = server.url;
        const N = 300; // ~60 KB of request lines: several batches and a partial one at the end
        for (let i = 0; i < N; i += 30)
            await Promise.all(Array.from({ length: 30 }, () => api(url, 'GET', '/v1/native/repository-authorities')));
        server.proc.kill('SIGTERM');
        expect(await server.exited).to.equal(0);
        const lines = server.output().trim().split('\n').map((l) => JSON.parse(l));
        const requests = lines.filter((l) => l.msg === 'request' && l.operation === 'repositories.list');
        expect(requests.length).to.equal(N);
        expect(lines.at(-1).msg).to.equal('stopped');
    });
});
//# sourceMappingURL=request-log.test.js.map