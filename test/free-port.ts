// A free loopback port, with no other import: test/swift.ts uses it, and the bench starts Swift
// outside mocha (./helpers.ts, which re-exports it, sets up the test environment on import).
import net from 'node:net';

/** A loopback port that was free a moment ago (the system's pick), for a server a test starts. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, '127.0.0.1', resolve); });
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
