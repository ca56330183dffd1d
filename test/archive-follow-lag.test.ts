// A standby's lag is the truth: against the writer's newest manifest (from the manifests'
// capture times), never 0 while it is behind. The writer (serve --archive) and the standby
// (serve --follow) share an in-memory store (test/memory-store.ts); the standby's reads of the
// objects a manifest names are held on purpose, so its apply stalls while the writer ships
// more. Then /healthz `follow` and `cairn archive status` on the standby report a lag of at
// least the age difference of the newest manifest and the applied one, and the commits and
// manifests behind; once the stalled manifest applies, the lag is still counted against the
// writer's newest (not reset to 0); once released, it catches up and the lag falls to 0.
import { expect } from 'chai';
import path from 'node:path';
import { api, cli, onTty, register, startTestServer, tempDir, until, type TestServer } from './helpers.js';
import { MemoryObjectStore } from './memory-store.js';
import { commitWorkflow, manifests } from './archive-fixture.js';
import { parseManifestKey } from '../lib/domain/archive-manifest.js';
import type { ObjectStore } from '../lib/archive/object-store.js';

const URL_ = 's3://cairn-test/follow-lag/';

/** The shared store as the standby sees it: its GETs of keys `holding(key)` says wait until the hold changes. */
function gatedView(store: MemoryObjectStore): { view: ObjectStore; hold: (holding: ((key: string) => boolean) | null) => void; held: () => number } {
  let holding: ((key: string) => boolean) | null = null;
  let release: () => void = () => {};
  let gate = Promise.resolve();
  let held = 0;
  const view = new Proxy(store, {
    get(target, prop) {
      if (prop === 'get') {
        return async (key: string) => {
          while (holding?.(key)) {
            held++;
            try { await gate; } finally { held--; }
          }
          return target.get(key);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return {
    view,
    hold: (h) => {
      const previous = release;
      holding = h;
      gate = new Promise<void>((r) => { release = r; });
      previous();
    },
    held: () => held,
  };
}

const isManifest = (key: string): boolean => parseManifestKey(key) !== null;

describe('archive: a standby\'s lag against the writer\'s newest manifest', function () {
  this.timeout(120_000);
  const servers: TestServer[] = [];
  let unhold = (): void => {};
  after(async () => {
    unhold(); // a failed test may leave the standby's reads held
    for (const s of servers) await s.stop();
  });

  it('reports the age difference and the commits and manifests behind while its apply stalls, never 0 while behind, and 0 once caught up', async () => {
    const store = new MemoryObjectStore(false);
    const gated = gatedView(store);
    unhold = () => gated.hold(null);
    const writer = await startTestServer(path.join(tempDir(), 'writer'), { archive: { url: URL_, store, intervalMs: 50 } });
    servers.push(writer);
    const a = await register(writer.url, 'alpha');
    const shipped = async (): Promise<void> => {
      await until('the writer shipped every commit', async () => {
        const r = (await api(writer.url, 'GET', '/healthz')).json.archive?.repositories.find((x: any) => x.repository === a);
        return r && r.committed !== '0' && r.shipped_commit === r.committed && r.uncovered_commits === 0;
      }, 30_000);
    };
    await commitWorkflow(writer.url, a, 1);
    await shipped();
    const standby = await startTestServer(path.join(tempDir(), 'standby'), { follow: { url: URL_, store: gated.view, intervalMs: 300 } });
    servers.push(standby);
    const follow = async (): Promise<any> => (await api(standby.url, 'GET', '/healthz')).json.follow;
    const row = async (): Promise<any> => (await follow())?.repositories.find((x: any) => x.repository === a);
    const m0 = (await manifests(store, a)).at(-1)!;
    await until('the standby applied the newest manifest', async () => (await row())?.manifest === m0.key, 30_000);
    expect((await row()).lag_seconds).to.equal(0);

    // The standby's reads of objects stall: the next manifest it applies waits.
    gated.hold((key) => !isManifest(key));
    await commitWorkflow(writer.url, a, 2);
    await shipped();
    await until('the standby stalls applying the next manifest', async () => gated.held() > 0, 30_000);
    const m1 = (await manifests(store, a)).at(-1)!;
    // The writer ships two more manifests meanwhile.
    await commitWorkflow(writer.url, a, 3);
    await shipped();
    await commitWorkflow(writer.url, a, 4);
    await shipped();
    const all = await manifests(store, a);
    const m3 = all.at(-1)!;
    const ageDifference = (later: typeof m0, earlier: typeof m0): number => Number(later.manifest.capturedAtUs - earlier.manifest.capturedAtUs) / 1e6;
    const commitsBetween = (later: typeof m0, earlier: typeof m0): number => Number(later.manifest.commitGeneration - earlier.manifest.commitGeneration);
    expect(commitsBetween(m3, m1)).to.be.greaterThan(0);

    // Stalled at m0: the lag counts up to the writer's newest manifest, m3, not to m1 (where the apply started).
    const stalled = await until('the standby reports its lag against the writer\'s newest manifest', async () => {
      const r = await row();
      return r && r.manifest === m0.key && r.lag_seconds >= ageDifference(m3, m0) ? r : null;
    }, 10_000).catch(async (err: Error) => { throw new Error(`${err.message}; the standby reports ${JSON.stringify(await row())}`); });
    expect(stalled.newest_commit).to.equal(String(m3.manifest.commitGeneration));
    expect(stalled.behind_commits, 'commits behind').to.equal(commitsBetween(m3, m0));
    expect(stalled.behind_manifests, 'manifests behind').to.equal(all.filter((m) => m.key > m0.key).length);
    const f = await follow();
    expect(f.lag_seconds).to.be.at.least(ageDifference(m3, m0));
    expect(f.behind_commits).to.equal(commitsBetween(m3, m0));
    expect(f.checked_at).to.be.a('string');
    // `cairn archive status` on the standby says the same.
    const status = await cli(['archive', 'status', '--server', standby.url, '--json']);
    expect(status.code, status.stderr).to.equal(0);
    const shown = JSON.parse(status.stdout);
    expect(shown.follow.behind_commits).to.equal(commitsBetween(m3, m0));
    expect(shown.follow.repositories[0].lag_seconds).to.be.at.least(ageDifference(m3, m0));
    const table = await onTty(['archive', 'status', '--server', standby.url]);
    expect(table.status, table.stdout).to.equal(0);
    expect(table.stdout).to.match(/following/);
    expect(table.stdout).to.match(new RegExp(`${commitsBetween(m3, m0)} commits behind`));

    // m1 applies (its objects are let through), m3's stay held: applied m1, still behind m3 — never 0.
    const m1Keys = new Set(m1.manifest.entries.map((e) => e.key));
    gated.hold((key) => !isManifest(key) && !m1Keys.has(key));
    const atM1 = await until('the standby applied m1', async () => {
      const r = await row();
      return r && r.manifest === m1.key ? r : null;
    }, 30_000);
    expect(atM1.lag_seconds, 'the lag right after an apply that left it behind').to.be.at.least(ageDifference(m3, m1));
    expect(atM1.lag_seconds).to.be.greaterThan(0);
    expect(atM1.behind_commits).to.equal(commitsBetween(m3, m1));

    // Released: it catches up and the lag falls to 0.
    gated.hold(null);
    const caught = await until('the standby caught up', async () => {
      const r = await row();
      return r && r.manifest === m3.key ? r : null;
    }, 30_000);
    expect(caught.lag_seconds).to.equal(0);
    expect(caught.behind_commits).to.equal(0);
    expect(caught.behind_manifests).to.equal(0);
    expect((await follow()).lag_seconds).to.equal(0);
  });
});
