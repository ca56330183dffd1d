// A full disk on the server: the write is answered 507 {"error": "insufficient storage: ..."}
// (not a 500), nothing is written, the operator's log names the file or directory it could not write, and
// the CLI says the disk is full. The disk is filled by the store's fault seam
// (lib/store/crash-point.ts faults.failAppend returning 'ENOSPC': half the append lands, then
// ENOSPC), as a real full disk would fail a log append part-way; faults.failWrite fails a pack or
// file write the same way.
import './hermetic-env.js';
import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startServer, type RunningServer } from '../lib/cli/serve.js';
import { faults } from '../lib/store/crash-point.js';
import { findTempFiles } from '../lib/store/durable.js';
import { api, cli, register, tempDir } from './helpers.js';

describe('a full disk on the server', () => {
  let server: RunningServer;
  const logged: Record<string, any>[] = [];
  let repo: number;
  before(async () => {
    const sink = new Writable({ write(chunk, _enc, done) { for (const line of String(chunk).split('\n')) if (line) logged.push(JSON.parse(line)); done(); } });
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: path.join(tempDir(), 'data'), log: pino({ level: 'info' }, sink) });
    await server.ready;
    repo = await register(server.url, 'full');
  });
  after(async () => {
    faults.failAppend = null;
    faults.failWrite = null;
    await server.stop();
  });

  it('answers 507 saying so, writes nothing, logs the path for the operator; the CLI says the disk is full', async () => {
    const T = `/v1/native/repository-authorities/${repo}/tasks`;
    faults.failAppend = (name) => (name === 'workflow.log' ? 'ENOSPC' : false);
    try {
      const res = await api(server.url, 'POST', T, { json: { title: 'T', intent: 'I' } });
      expect(res.status, res.text).to.equal(507);
      expect(res.json).to.deep.equal({ error: "insufficient storage: the server's disk is full, nothing was written; try again once its operator frees space" });
      const failed = logged.find((l) => l.msg === 'request failed');
      expect(failed?.err?.code).to.equal('ENOSPC');
      expect(failed?.err?.message).to.match(/^ENOSPC: no space left on device, write \(appending to \/.*\/workflow\.log\)$/);
      expect(JSON.stringify(res.json)).to.not.include('workflow.log');

      const viaCli = await cli(['--as', 'alice', 'task', 'create', '--server', server.url, '--repo', String(repo), '--title', 'T', '--intent', 'I']);
      expect(viaCli.code).to.equal(1);
      expect(viaCli.stderr).to.match(/^cairn: repository \d+: tasks: HTTP 507: insufficient storage: the server's disk is full, nothing was written/);
      expect(viaCli.stderr).to.not.include('/v1/');
    } finally {
      faults.failAppend = null;
    }
    // Nothing was written, and with space again the same write succeeds.
    expect((await api(server.url, 'GET', T)).json.tasks).to.deep.equal([]);
    const again = await api(server.url, 'POST', T, { json: { title: 'T', intent: 'I' } });
    expect(again.status, again.text).to.equal(200);
    expect(again.json.task.task_id).to.equal('task-1');
  });

  // Every write path, not only log appends: a pack (a push's upload to staging/, or the pack a
  // commit writes) and a file written whole (an index segment). Each is a 507 with nothing left
  // behind, and the log line names the directory; the answer never does.
  for (const [what, dirOf] of [
    ['a pack upload', (f: string) => /\/staging\//.test(f)],
    ['an index segment', (f: string) => /\/index\/[^/]*$/.test(f)],
  ] as const) {
    it(`a full disk at ${what} is a 507, leaves nothing behind, and the log names the directory`, async () => {
      const seed = path.join(tempDir(), 'seed');
      await fsp.mkdir(seed);
      await fsp.writeFile(path.join(seed, 'a.txt'), `${what}\n`);
      const line = what.replace(/ /g, '-');
      const failedAt = new Set<string>();
      faults.failWrite = (file) => {
        if (!dirOf(file)) return false;
        failedAt.add(path.dirname(file));
        return 'ENOSPC';
      };
      const before = logged.length;
      try {
        const pushed = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', line, seed]);
        expect(pushed.code, pushed.stderr).to.equal(1);
        expect(pushed.stderr).to.include("HTTP 507: insufficient storage: the server's disk is full, nothing was written");
        expect(pushed.stderr).to.not.include('/staging').and.not.include('/index');
      } finally {
        faults.failWrite = null;
      }
      expect(failedAt.size).to.be.above(0);
      const failed = logged.slice(before).filter((l) => l.msg === 'request failed');
      expect(failed, JSON.stringify(logged.slice(before))).to.have.length.above(0);
      for (const l of failed) {
        expect(l.err.code).to.equal('ENOSPC');
        const dir = /^ENOSPC: no space left on device, write \(writing in (\/.*)\)$/.exec(l.err.message)?.[1];
        expect(failedAt.has(dir ?? ''), l.err.message).to.equal(true);
      }
      // Nothing written: the line does not exist, and no temp file was left where the write failed.
      expect((await api(server.url, 'GET', `/v1/native/repository-authorities/${repo}/lines/${line}`)).status).to.equal(404);
      for (const dir of failedAt) expect(await findTempFiles(dir)).to.deep.equal([]);
      const again = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', line, seed]);
      expect(again.code, again.stderr).to.equal(0);
    });
  }
});
