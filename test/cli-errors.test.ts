// Errors in the user's words: a server that is not cairn is said to be so (not "repository 0 ...
// 404"), https against a plain-http server and plain http against an https one say which to
// write, and no message carries a route (/v1/...).
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cli, register, startTestServer, type TestServer } from './helpers.js';

/** A loopback HTTP server answering every request with `status`, `type` and `body`. */
async function answering(status: number, type: string, body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(status, type ? { 'content-type': type } : {});
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('cli errors in the user\'s words', () => {
  let server: TestServer;
  let repo: number;
  before(async () => {
    server = await startTestServer();
    repo = await register(server.url, 'errs');
  });
  after(() => server.stop());

  it('a server that is not cairn (a web page, another JSON service) is said to be one, for reads and writes', async () => {
    for (const [status, type, body] of [[404, 'text/html', '<html><body>Not Found</body></html>'], [404, 'application/json', '{"message":"Not Found"}'], [200, 'text/html', '<html>welcome</html>']] as const) {
      const other = await answering(status, type, body);
      try {
        for (const args of [['lines', '--repo', '0'], ['task', 'create', '--repo', '0', '--title', 'T', '--intent', 'I'], ['checkout', '--repo', '0', '--line', 'main', '--create', '/nonexistent/x']]) {
          const r = await cli([...args, '--server', other.url], { CAIRN_USER: 'alice' });
          expect(r.code, `${args[0]} ${status} ${type}: ${r.stderr}`).to.equal(1);
          expect(r.stderr, `${args[0]} ${status} ${type}`).to.include(`${other.url} does not look like a cairn server`);
          expect(r.stderr).to.not.match(/\/v1\/|is not registered|HTTP 404: /);
        }
      } finally {
        await other.close();
      }
    }
  });

  it('https against a plain-http server, and plain http against an https front door, say which to write', async () => {
    const port = new URL(server.url).port;
    const tls = await cli(['lines', '--server', `https://127.0.0.1:${port}`, '--repo', String(repo)]);
    expect(tls.code).to.equal(1);
    expect(tls.stderr).to.include(`does not speak https (TLS) there — the server is plain http: write the address as http://127.0.0.1:${port}`);
    expect(tls.stderr).to.not.match(/^cairn: cannot reach [^\n]*: EPROTO\n$/);
    // What Caddy and Go's servers answer to plain http on a TLS port.
    const front = await answering(400, 'text/plain', 'Client sent an HTTP request to an HTTPS server.\n');
    try {
      const plain = await cli(['lines', '--server', front.url, '--repo', '0']);
      expect(plain.code).to.equal(1);
      expect(plain.stderr).to.include(`${front.url} speaks https, not plain http: write the address as https://${front.url.slice('http://'.length)}`);
    } finally {
      await front.close();
    }
  });

  it('no route fragment in a refusal the server answered', async () => {
    const r = await cli(['diff', '--server', server.url, '--repo', String(repo), 'change-9']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/^cairn: repository \d+: change change-9: diff: HTTP 404: /);
    const closed = await cli(['change', 'close', '--server', server.url, '--repo', String(repo), '--status', 'abandoned', 'change-9']);
    expect(closed.stderr).to.match(/^cairn: repository \d+: change change-9 \(close\): HTTP 404: /);
    for (const text of [r.stderr, closed.stderr]) expect(text).to.not.match(/\/v1\/|read\/changes|:close/);
  });
});
