// A process that holds the writer lease (lib/lease/etcd-lease.ts) and prints its state every
// 100 ms, for test/lease-etcd.test.ts to stop and resume (SIGSTOP/SIGCONT). Usage:
// node dist/test/lease-holder-child.js ETCD_URL TTL_SECONDS
import { EtcdWriterLease, parseLeaseUrl } from '../lib/lease/etcd-lease.js';

const [url, ttl] = process.argv.slice(2);
const lease = new EtcdWriterLease(parseLeaseUrl(url!), { ttlSeconds: Number(ttl), publicUrl: 'http://child.invalid' });
for (;;) {
  try {
    if (await lease.tryTakeover()) break;
  } catch { /* etcd not answering yet */ }
  await new Promise((r) => setTimeout(r, 200));
}
setInterval(() => process.stdout.write(`state ${lease.state}\n`), 100);
