// The storage core (storage-layout.md §9, §17): the commit point and its golden bytes, strict
// logs that never drop acknowledged records, failed appends, group commit, index segments and
// their merges, the format-v0 upgrade, and fsck catching a flipped byte in any file.
import { expect } from 'chai';
import fc from 'fast-check';
import { copyFileSync, promises as fsp, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { blobId, encodeSnapshot, encodeTree, treeId } from '../lib/domain/content.js';
import { Corrupt } from '../lib/domain/errors.js';
import { COMMIT_FILE_SIZE, decodeCommitFile, decodeCommitSlot, emptyCommitState, encodeCommitRecord, SLOT_SIZE } from '../lib/store/commit-point.js';
import { ContentStore } from '../lib/store/content-store.js';
import { faults } from '../lib/store/crash-point.js';
import { encodeLog } from '../lib/store/framed-log.js';
import { encodeEvent, type EventRecord } from '../lib/store/event-log.js';
import { fsckAuthority } from '../lib/store/fsck.js';
import { INDEX_KIND_BLOB, INDEX_KIND_SNAPSHOT, INDEX_KIND_TREE, IndexReader, writeMergedIndex, writeSegment } from '../lib/store/index-file.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
import { crc32, writeU64 } from '../lib/store/binary.js';
import { encodeJobRecord } from '../lib/store/job-log.js';
import { decodeCheckpoint, encodeCheckpoint, SectionWriter } from '../lib/store/workflow-checkpoint.js';
import { WorkflowRecords } from '../lib/store/workflow-records.js';
import { WorkflowIndexes } from '../lib/domain/workflow/indexes.js';
import { ReviewIndex } from '../lib/domain/workflow/review-index.js';
import { api, cli, FIXTURES, register, spawnServer, startTestServer, tempDir } from './helpers.js';

const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const REPO = (i: number) => `/v1/native/repository-authorities/${i}`;

/** Commit one blob through a server-built pack; resolves when durable. */
async function commitBlob(store: ContentStore, content: Buffer): Promise<string> {
  const id = blobId(content);
  const pack = buildPack(PACK_KIND_OBJECT, [{ id, raw: content }]);
  const e = pack.entries[0];
  await store.transact((tx) => {
    tx.writePack(PACK_KIND_OBJECT, pack.packId, pack.bytes);
    tx.addLocator({ kind: 'blob', id, pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 });
  });
  return id;
}

async function withStore<T>(root: string, fn: (store: ContentStore) => Promise<T>): Promise<T> {
  const { store } = await ContentStore.open(root);
  try {
    return await fn(store);
  } finally {
    await store.settle();
    store.close();
  }
}

describe('storage core: commit point', () => {
  const goldenStates = () => {
    const older = emptyCommitState();
    Object.assign(older, { generation: 5, snapshot_count: 1 });
    older.logs.snapshots = 77;
    older.segments = { blobs: [2], trees: [2], snapshots: [3, 5] };
    const newer = structuredClone(older);
    newer.generation = 6;
    newer.logs.workflow = 156;
    return { older, newer };
  };

  it('commit.bin: golden bytes of two slots (version 2); the newer generation is current', () => {
    const { older, newer } = goldenStates();
    newer.logs.events = 188;
    newer.log_files.workflow = 4;
    Object.assign(newer, { event_count: 2, last_event_at_us: 1700000000000001 });
    const file = Buffer.alloc(COMMIT_FILE_SIZE);
    encodeCommitRecord(newer).copy(file, 0);
    encodeCommitRecord(older).copy(file, SLOT_SIZE);
    expect(file.equals(fixture('commit-v2.bin'))).to.equal(true);
    expect(decodeCommitFile(fixture('commit-v2.bin'))).to.deep.equal(newer);
    expect(decodeCommitSlot(file.subarray(SLOT_SIZE), 'slot 1')).to.deep.equal(older);
  });

  it('commit.bin version 1 (before events.log) still reads: no events, the same logs and segments', () => {
    const { older, newer } = goldenStates();
    expect(decodeCommitFile(fixture('commit-v1.bin'))).to.deep.equal(newer);
    expect(decodeCommitSlot(fixture('commit-v1.bin').subarray(SLOT_SIZE), 'slot 1')).to.deep.equal(older);
  });

  it('a version-1 commit point with more segments than version 2 holds (15 of 16) opens and commits events', async () => {
    const root = tempDir();
    await fsp.mkdir(path.join(root, 'index'), { recursive: true });
    const segments = Array.from({ length: 15 }, (_, i) => i + 1);
    for (const n of segments) await writeSegment(path.join(root, 'index', `blobs.${n}.idx`), INDEX_KIND_BLOB, []);
    // Version 1: generation at 12, segment counts at 68, 16 segment slots per index from 80, CRC at 508.
    const record = Buffer.alloc(512);
    record.write('CAIRNCMT', 0, 'ascii');
    record.writeUInt8(1, 8);
    writeU64(record, 16, 12);
    record.writeUInt32LE(segments.length, 68);
    segments.forEach((n, j) => writeU64(record, n, 80 + j * 8));
    record.writeUInt32LE(crc32(record.subarray(0, 508)), 508);
    const file = Buffer.alloc(COMMIT_FILE_SIZE);
    record.copy(file, 0);
    writeFileSync(path.join(root, 'commit.bin'), file);
    expect(decodeCommitFile(file)!.segments.blobs).to.deep.equal(segments);

    await withStore(root, async (store) => {
      await store.transact((tx) => tx.emit('task.created', { task_id: 'task-1', plan_id: null }));
      expect(store.events.read(0, 10).map((e) => e.data.task_id)).to.deep.equal(['task-1']);
      expect(store.commitState.segments.blobs.length).to.be.at.most(14);
    });
    await withStore(root, async (store) => {
      expect(store.commitState.event_count).to.equal(1);
    });
  });

  it('a never-written slot is ignored; a damaged slot is corruption, never skipped in favour of the other', () => {
    for (const name of ['commit-v1.bin', 'commit-v2.bin']) {
      const file = Buffer.from(fixture(name));
      file.fill(0, 0, SLOT_SIZE);
      expect(decodeCommitFile(file)!.generation).to.equal(5);
      for (const at of [0, 8, 12, 100, 466, 476, 490, 506, 511, 600, 4095]) {
        const damaged = Buffer.from(fixture(name));
        damaged[at] ^= 0x01;
        expect(() => decodeCommitFile(damaged), `${name} byte ${at}`).to.throw(Corrupt);
      }
    }
  });

  it('events.log: two events, golden bytes', () => {
    const events: EventRecord[] = [
      { seq: 1, at_us: 1700000000000000, type: 'line.created', data: { line: 'main' } },
      { seq: 2, at_us: 1700000000000001, type: 'task.created', data: { task_id: 'T-1' } },
    ];
    const bytes = encodeLog('CAIRNEVT', events.map(encodeEvent));
    expect(bytes.equals(fixture('events-v0.log'))).to.equal(true);
    expect(bytes.length).to.equal(188);
  });

  it('workflow.ckpt: lines, one task location, one upsert in clear, the book indexes (one task, one change) and the review index (a request, an attestation, a decision), golden bytes', () => {
    const records = new WorkflowRecords(() => { throw new Error('not read'); });
    records.set({ type: 'task', id: 'task-1', body: null }, 137, 0);
    const indexes = new WorkflowIndexes();
    indexes.applyTask(1, 'active', null);
    indexes.applyChange(1, 1, 'draft');
    const reviews = new ReviewIndex();
    reviews.addReview(1, 1, { group: 'core', requested_at_s: 1700000000 });
    reviews.addAttestation(1, 1, 1);
    reviews.addDecision(1, 1, 1, 1, 'ab'.repeat(32));
    const sections = new Map([
      ['records', Buffer.concat([new SectionWriter().json([['main', 'active', null, 1700000000]]).done(), records.encode()])],
      ['workflow-indexes', indexes.encode()],
      ['review-indexes', reviews.encode()],
    ]);
    const bytes = encodeCheckpoint({ cover: { log_file: 0, length: 300, last_crc: 0x11223344, records: 2, in_clear: 1 }, sections });
    expect(bytes.equals(fixture('workflow-ckpt-v3.bin'))).to.equal(true);
    expect(bytes.length).to.equal(354);
    const back = decodeCheckpoint(bytes);
    expect(back.cover).to.deep.equal({ log_file: 0, length: 300, last_crc: 0x11223344, records: 2, in_clear: 1 });
    // Version 1 (before the count of fields in clear) and 2 (before format-1 sealed values
    // counted with them): refused, so an open rebuilds it from the log.
    expect(() => decodeCheckpoint(fixture('workflow-ckpt-v1.bin'))).to.throw('version 1 is not 3');
    expect(() => decodeCheckpoint(fixture('workflow-ckpt-v2.bin'))).to.throw('version 2 is not 3');
    expect(WorkflowIndexes.decode(back.sections.get('workflow-indexes')!).encode().equals(indexes.encode())).to.equal(true);
    const r = ReviewIndex.decode(back.sections.get('review-indexes')!);
    expect(r.encode().equals(reviews.encode())).to.equal(true);
    expect([r.reviewsOf(1), r.attestationsOf(1, 1), r.decisionsOf(1, 1), r.chainSeq, r.chainSha256]).to.deep.equal([1, 1, 1, 1, 'ab'.repeat(32)]);
    expect(r.requestOf(1)).to.deep.equal({ review: 1, group: 'core', requested_at_s: 1700000000 });
  });

  it('workflow.log: one transaction record, golden bytes', () => {
    const txn = { at_s: 1700000000, upserts: [{ type: 'line', id: 'main', body: { status: 'active', head_snapshot_id: null, updated_at_s: 1700000000 } }] };
    expect(encodeLog('CAIRNWFL', [Buffer.from(JSON.stringify(txn), 'utf8')]).equals(fixture('workflow-v0.log'))).to.equal(true);
  });
});

describe('storage core: logs, failures and group commit', () => {
  it('a damaged length field inside the committed range is reported corrupt with file and offset; nothing is cut', async () => {
    let server = await startTestServer();
    const repo = await register(server.url, 'damaged');
    for (const name of ['a', 'b', 'c']) expect((await api(server.url, 'PUT', `${REPO(repo)}/lines/${name}`, { json: {} })).status).to.equal(200);
    await server.stop();
    const file = path.join(server.dataDir, 'repositories', String(repo), 'workflow.log');
    const bytes = readFileSync(file);
    const damaged = Buffer.from(bytes);
    damaged[12] ^= 0x20; // the first record's length field
    writeFileSync(file, damaged);
    // Without a checkpoint the open replays the whole log (with one, the records it covers are
    // read, and checked, when used; fsck checks every one).
    rmSync(path.join(path.dirname(file), 'workflow.ckpt'), { force: true });
    server = await startTestServer(server.dataDir);
    try {
      const res = await api(server.url, 'GET', `${REPO(repo)}/lines`);
      expect(res.status).to.equal(500);
      expect(readFileSync(file).equals(damaged)).to.equal(true);
    } finally {
      await server.stop();
    }
    const check = await fsckAuthority(path.join(server.dataDir, 'repositories', String(repo)), repo);
    expect(check.problems.join('\n')).to.match(/workflow\.log: record at byte 12/);
    expect(readFileSync(file).equals(damaged)).to.equal(true);
  });

  it('an append that fails half-way fails only its callers; later appends and a reopen keep every acknowledged record', async () => {
    const root = path.join(tempDir(), 'auth');
    const acknowledged: string[] = [];
    await withStore(root, async (store) => {
      let n = 0;
      faults.failAppend = (name) => name === 'workflow.log' && ++n === 3;
      try {
        const results = [];
        for (let i = 0; i < 6; i++) {
          results.push(await store.transact((tx) => tx.setLine({ name: `l${i}`, status: 'active', head_snapshot_id: null, updated_at_s: i })).then(() => 'ok', (e) => String(e)));
        }
        expect(results.filter((r) => r !== 'ok')).to.have.length(1);
        expect(results[2]).to.match(/injected EIO/);
        results.forEach((r, i) => { if (r === 'ok') acknowledged.push(`l${i}`); });
        expect(store.lines().map((l) => l.name)).to.deep.equal(acknowledged);
      } finally {
        faults.failAppend = null;
      }
    });
    await withStore(root, async (store) => {
      expect(store.lines().map((l) => l.name)).to.deep.equal(acknowledged);
    });
    expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
  });

  it('concurrent transactions share commits (group commit) and each caller gets exactly its own result', async () => {
    const root = path.join(tempDir(), 'auth');
    await withStore(root, async (store) => {
      const before = store.generation;
      // 64 compare-and-set creations of 8 lines: exactly one per line wins.
      const attempts = Array.from({ length: 64 }, (_, i) => store.transact((tx) => {
        const name = `line-${i % 8}`;
        if (tx.line(name)) throw new Error('exists');
        tx.setLine({ name, status: 'active', head_snapshot_id: null, updated_at_s: i });
        return i;
      }).then((v) => ({ ok: true, v }), () => ({ ok: false, v: -1 })));
      const results = await Promise.all(attempts);
      expect(results.filter((r) => r.ok).map((r) => r.v).sort((a, b) => a - b)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(store.generation - before).to.be.below(8); // fewer commits than successful writers
      expect(store.lines().map((l) => l.updated_at_s)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    });
  });

  it('over HTTP: 40 concurrent compare-and-set moves of one line, one wins and survives a restart', async () => {
    let server = await startTestServer();
    const { repo, sid } = await seed(server.url);
    const results = await Promise.all(Array.from({ length: 40 }, () => api(server.url, 'PUT', `${REPO(repo)}/lines/race`, { json: { head_snapshot_id: sid, expected_head_snapshot_id: null } })));
    expect(results.filter((r) => r.status === 200)).to.have.length(1);
    expect(results.filter((r) => r.status === 409)).to.have.length(39);
    await server.stop();
    server = await startTestServer(server.dataDir);
    try {
      expect((await api(server.url, 'GET', `${REPO(repo)}/lines/race`)).json.head_snapshot_id).to.equal(sid);
    } finally {
      await server.stop();
    }
  });

  it('a transaction reads objects that an earlier transaction of its batch wrote in a server-built pack', async () => {
    const root = path.join(tempDir(), 'auth');
    await withStore(root, async (store) => {
      const raw = Buffer.from('built by the server\n');
      const id = blobId(raw);
      const pack = buildPack(PACK_KIND_OBJECT, [{ id, raw }]);
      const e = pack.entries[0];
      const first = store.transact((tx) => {
        tx.writePack(PACK_KIND_OBJECT, pack.packId, pack.bytes);
        tx.addLocator({ kind: 'blob', id, pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 });
      });
      const second = store.transact(async (tx) => (await tx.readLocated(tx.locator('blob', id)!)).toString());
      await first;
      expect(await second).to.equal('built by the server\n');
      expect((await store.readObject('blob', id)).toString()).to.equal('built by the server\n');
    });
  });

  it('index segments: small commits add small segments, background merges bound their number, every id stays found', async function () {
    this.timeout(60_000);
    const root = path.join(tempDir(), 'auth');
    const ids: string[] = [];
    await withStore(root, async (store) => {
      for (let i = 0; i < 40; i++) ids.push(await commitBlob(store, Buffer.from(`blob ${i}`)));
      await store.settle();
      expect(store.segmentCounts().blobs).to.be.at.most(9);
      for (const id of ids) expect(store.has('blob', id), id).to.equal(true);
      expect((await store.readObject('blob', ids[17])).toString()).to.equal('blob 17');
    });
    await withStore(root, async (store) => {
      for (const id of ids) expect(store.has('blob', id)).to.equal(true);
      expect([...store.locators('blob')].map((l) => l.id)).to.deep.equal([...ids].sort());
    });
    const files = (await fsp.readdir(path.join(root, 'index'))).filter((f) => f.startsWith('blobs.'));
    expect(files.length).to.be.at.most(9);
    expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
  });
});

describe('storage core: review findings (merges, failed commit points, fsck of jobs)', () => {
  it('segments of halving sizes (every older one larger than the rest) still merge: no stall, the store reopens', async function () {
    this.timeout(60_000);
    const root = path.join(tempDir(), 'auth');
    const ids: string[] = [];
    await withStore(root, async (store) => {
      for (let k = 8; k >= 0; k--) {
        const blobs = Array.from({ length: 2 ** k }, (_, i) => Buffer.from(`seg ${k} blob ${i}`));
        const pack = buildPack(PACK_KIND_OBJECT, blobs.map((raw) => ({ id: blobId(raw), raw })));
        await store.transact((tx) => {
          tx.writePack(PACK_KIND_OBJECT, pack.packId, pack.bytes);
          pack.entries.forEach((e) => tx.addLocator({ kind: 'blob', id: e.id, pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32 }));
        });
        ids.push(...pack.entries.map((e) => e.id));
      }
      await store.settle();
      expect(store.segmentCounts().blobs).to.be.at.most(8);
    });
    await withStore(root, async (store) => {
      for (const id of ids) expect(store.has('blob', id)).to.equal(true);
    });
  });

  it('merges racing concurrent commits keep every segment list increasing; the store reopens', async function () {
    this.timeout(60_000);
    const root = path.join(tempDir(), 'auth');
    const ids: string[] = [];
    await withStore(root, async (store) => {
      await Promise.all(Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 30; i++) ids.push(await commitBlob(store, Buffer.from(`writer ${w} commit ${i}`)));
      }));
    });
    await withStore(root, async (store) => {
      expect(ids).to.have.length(240);
      for (const id of ids) expect(store.has('blob', id)).to.equal(true);
    });
    expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
  });

  it('a compaction whose commit-point write reports failure removes nothing the slot may name; writes stop; a reopen is consistent', async () => {
    const root = path.join(tempDir(), 'auth');
    await withStore(root, async (store) => {
      for (let i = 0; i < 3; i++) await store.transact((tx) => tx.append('plans', Buffer.from(JSON.stringify({ plan: { plan_id: `plan-${i}` } }))));
      faults.failCommitPoint = () => true;
      try {
        let error: unknown;
        await store.compactLog('plans', [Buffer.from(JSON.stringify({ plan: { plan_id: 'plan-2' } }))]).catch((e) => { error = e; });
        expect(String(error)).to.match(/injected EIO/);
      } finally {
        faults.failCommitPoint = null;
      }
      let refused: unknown;
      await store.transact((tx) => tx.setLine({ name: 'x', status: 'active', head_snapshot_id: null, updated_at_s: 1 })).catch((e) => { refused = e; });
      expect(refused).to.be.instanceOf(Corrupt);
    });
    // The slot landed before the (injected) error: the compacted log is current and intact.
    await withStore(root, async (store) => {
      expect([...store.logRecords('plans')].map((r) => JSON.parse(r.body.toString()).plan.plan_id)).to.deep.equal(['plan-2']);
    });
  });

  it('fsck replays jobs.log as the job queue does: a gap an id floor left passes, a new job below an earlier one is reported', async () => {
    const job = JSON.parse(fixture('jobs-v0.json').toString());
    const gap = path.join(tempDir(), 'auth');
    await withStore(gap, async (store) => {
      for (const i of [0, 5, 0, 6]) await store.transact((tx) => tx.append('jobs', encodeJobRecord({ ...job, repository_index: 0, worker_job_index: i })));
    });
    expect((await fsckAuthority(gap, 0)).problems.filter((p) => /jobs\.log/.test(p))).to.deep.equal([]);
    const back = path.join(tempDir(), 'auth');
    await withStore(back, async (store) => {
      for (const i of [5, 3]) await store.transact((tx) => tx.append('jobs', encodeJobRecord({ ...job, repository_index: 0, worker_job_index: i })));
    });
    expect((await fsckAuthority(back, 0)).problems.join('\n')).to.match(/jobs\.log: record at byte [0-9]+ adds job 3 after job 5/);
  });
});

describe('storage core: workflow.log compaction', () => {
  it('rewrites a mostly superseded workflow.log into the latest upsert per line, named by the commit point', async function () {
    this.timeout(60_000);
    const root = path.join(tempDir(), 'auth');
    await withStore(root, async (store) => {
      await Promise.all(Array.from({ length: 1100 }, (_, i) => store.transact((tx) => tx.setLine({ name: `l${i % 3}`, status: 'active', head_snapshot_id: null, updated_at_s: i }))));
      expect(await store.compactWorkflow()).to.match(/compacted from 1100 to 3 records/);
      expect(store.commitState.log_files.workflow).to.be.above(0);
      expect(store.lines().map((l) => [l.name, l.updated_at_s])).to.deep.equal([['l0', 1098], ['l1', 1099], ['l2', 1097]]);
    });
    await withStore(root, async (store) => {
      expect(store.lines().map((l) => [l.name, l.updated_at_s])).to.deep.equal([['l0', 1098], ['l1', 1099], ['l2', 1097]]);
      expect(await store.compactWorkflow()).to.equal(null);
    });
    expect((await fsp.readdir(root)).filter((n) => n.startsWith('workflow') && n.endsWith('.log'))).to.have.length(1);
    expect((await fsckAuthority(root, 0)).problems.filter((p) => !p.includes('authority.bin'))).to.deep.equal([]);
  });
});

describe('storage core: upgrade from format v0', () => {
  it('opens a data directory written by format v0 (golden fixtures) once, with a note, keeping every record', async () => {
    const root = path.join(tempDir(), 'v0');
    await fsp.mkdir(path.join(root, 'index'), { recursive: true });
    await fsp.mkdir(path.join(root, 'packs/objects'), { recursive: true });
    copyFileSync(path.join(FIXTURES, 'state-v0.bin'), path.join(root, 'state.bin'));
    copyFileSync(path.join(FIXTURES, 'lines-v0.bin'), path.join(root, 'lines.3.bin'));
    copyFileSync(path.join(FIXTURES, 'snapshots-v0.log'), path.join(root, 'snapshots.log'));
    copyFileSync(path.join(FIXTURES, 'blobs-index-v0.idx'), path.join(root, 'index/blobs.2.idx'));
    const pack = fixture('object-pack-v0.pack');
    copyFileSync(path.join(FIXTURES, 'object-pack-v0.pack'), path.join(root, 'packs/objects', `${blobId(pack)}.pack`));
    await writeMergedIndex(path.join(root, 'index/trees.2.idx'), IndexReader.empty(INDEX_KIND_TREE), [], []);
    const snap = fixture('snapshot-v0.bin');
    const snapshotId = blobId(snap);
    await writeMergedIndex(path.join(root, 'index/snapshots.3.idx'), IndexReader.empty(INDEX_KIND_SNAPSHOT), [{ id: snapshotId, a: 0, b: crc32(snap), c: 16, d: snap.length, e: 1700000000 }], []);
    // jobs.log with an unfinished v0 tail: the upgrade applies v0's torn-tail rule once.
    writeFileSync(path.join(root, 'jobs.log'), Buffer.concat([fixture('jobs-v0.log'), Buffer.from([9, 0, 0, 0, 1])]));
    copyFileSync(path.join(FIXTURES, 'plans-v0.log'), path.join(root, 'plans.log'));

    const { store, notes } = await ContentStore.open(root);
    try {
      expect(notes.join('\n')).to.match(/upgraded storage format v0 to v1/).and.match(/cut 5 bytes/);
      expect(store.line('main')!.head_snapshot_id).to.equal(snapshotId);
      expect(store.line('old')!.status).to.equal('archived');
      expect(store.snapshot(snapshotId)!.snapshot_index).to.equal(0);
      expect((await store.readObject('blob', blobId(Buffer.from('hello\n')))).toString()).to.equal('hello\n');
      expect([...store.logRecords('jobs')].map((r) => r.body)).to.deep.equal([encodeJobRecord(JSON.parse(fixture('jobs-v0.json').toString()))]);
      expect([...store.logRecords('plans')]).to.have.length(1);
      expect(store.commitState.generation).to.equal(4);
    } finally {
      store.close();
    }
    expect(await fsp.readdir(root)).to.include('commit.bin').and.not.include('state.bin');
    // A second open is plain: nothing more to upgrade.
    const again = await ContentStore.open(root);
    again.store.close();
    expect(again.notes).to.deep.equal([]);
  });
});

describe('storage core: kill -9 during multi-record commits', () => {
  // A plan create commits a server-built pack, a blob locator segment and a plans.log record
  // together; a line PUT commits a workflow.log record. Killed at each step, the authority
  // reopens with all of a commit or none of it.
  for (const point of ['commit:after-adopt', 'commit:after-index', 'commit:after-log', 'commit:before-state', 'commit:after-state']) {
    it(`a plan create killed at ${point} is all there or not at all`, async function () {
      this.timeout(60_000);
      const data = path.join(tempDir(), 'data');
      const first = await spawnServer(data);
      const repo = await register(first.url, 'crash');
      first.proc.kill('SIGTERM');
      await first.exited;
      const doomed = await spawnServer(data, [], true, { CAIRN_TEST_CRASH_AT: point });
      const created = await api(doomed.url, 'POST', `${REPO(repo)}/sprints`, { json: { title: 'Crash plan', artifact_path: 'plans/crash.md', artifact_heading: 'Crash', artifact_body: '# Crash\n\n- [ ] survive {#s1}\n' } }).catch(() => null);
      expect(created).to.equal(null);
      expect(await doomed.exited).to.equal(null);
      const restarted = await spawnServer(data);
      try {
        const plans = await api(restarted.url, 'GET', `${REPO(repo)}/sprints`);
        expect(plans.status).to.equal(200);
        if (point === 'commit:after-state') {
          expect(plans.json.plans).to.have.length(1);
          const id = plans.json.plans[0].plan_id;
          const head = (await api(restarted.url, 'GET', `${REPO(repo)}/sprints/${id}`)).json.head_revision;
          const art = await api(restarted.url, 'GET', `${REPO(repo)}/sprints/${id}/revisions/${head.plan_revision_id}/artifacts`);
          expect(art.json.packed_artifact.body).to.equal('# Crash\n\n- [ ] survive {#s1}\n');
        } else {
          expect(plans.json.plans).to.have.length(0);
          expect((await api(restarted.url, 'POST', `${REPO(repo)}/sprints`, { json: { title: 'Again', artifact_path: 'a.md', artifact_heading: 'A' } })).status).to.equal(200);
        }
      } finally {
        restarted.proc.kill('SIGTERM');
        await restarted.exited;
      }
      const check = await cli(['fsck', '--data', data]);
      expect(check.code, check.stdout + check.stderr).to.equal(0);
    });
  }

  it('a jobs.log compaction killed before its commit point leaves the old log current', async function () {
    this.timeout(60_000);
    const data = path.join(tempDir(), 'data');
    const first = await spawnServer(data);
    const repo = await register(first.url, 'compact');
    const tree = await api(first.url, 'PUT', `${REPO(repo)}/lines/main`, { json: {} });
    expect(tree.status).to.equal(200);
    first.proc.kill('SIGTERM');
    await first.exited;
    // 70 superseded records of one job, written directly so the next open compacts.
    const root = path.join(data, 'repositories', String(repo));
    const job = JSON.parse(fixture('jobs-v0.json').toString());
    job.repository_index = repo;
    job.worker_job_index = 0;
    await withStore(root, async (store) => {
      for (let i = 0; i < 70; i++) await store.transact((tx) => tx.append('jobs', encodeJobRecord({ ...job, updated_at_s: job.updated_at_s + i, lease_expires_at_s: 4000000000 })));
    });
    const doomed = await spawnServer(data, [], false, { CAIRN_TEST_CRASH_AT: 'compact:before-state' });
    expect(await doomed.exited).to.equal(null);
    const names = (await fsp.readdir(root)).filter((n) => n.startsWith('jobs'));
    expect(names).to.include('jobs.log');
    const restarted = await spawnServer(data);
    try {
      const j = await api(restarted.url, 'GET', `${REPO(repo)}/worker-jobs/0`);
      expect(j.json.job.updated_at_s, j.text).to.equal(job.updated_at_s + 69);
      expect((await fsp.readdir(root)).filter((n) => /^jobs/.test(n))).to.have.length(1).and.not.include('jobs.log');
    } finally {
      restarted.proc.kill('SIGTERM');
      await restarted.exited;
    }
  });
});

describe('storage core: fsck reads every file', () => {
  it('reports a single flipped byte in any file of an authority (property)', async function () {
    this.timeout(120_000);
    // An authority holding every kind of file: packs, segments, all five logs, a staged pack.
    const server = await startTestServer();
    const { repo, sid, put } = await seed(server.url);
    expect((await api(server.url, 'POST', `${REPO(repo)}/sprints`, { json: { title: 'P', artifact_path: 'p.md', artifact_heading: 'P', artifact_body: '# P\n- [ ] x {#x}\n' } })).status).to.equal(200);
    expect((await api(server.url, 'POST', `${REPO(repo)}:runCi`, { json: { snapshot_id: sid } })).status).to.equal(200);
    const spare = buildPack(PACK_KIND_OBJECT, [{ id: blobId(Buffer.from('staged')), raw: Buffer.from('staged') }]);
    await put('object-packs', spare); // stays staged
    await server.stop();
    const root = path.join(server.dataDir, 'repositories', String(repo));
    const clean = await fsckAuthority(root, repo);
    expect(clean.problems).to.deep.equal([]);
    expect(clean.notes).to.deep.equal([]);
    const files = (await listFiles(root)).filter((f) => readFileSync(path.join(root, f)).length > 0);
    expect(files).to.include.members(['authority.bin', 'commit.bin', 'snapshots.log', 'jobs.log', 'plans.log', 'workflow.log', 'events.log', 'workflow.ckpt']);
    expect(files.some((f) => f.startsWith('index/blobs.'))).to.equal(true);
    expect(files.some((f) => f.startsWith('staging/objects/'))).to.equal(true);
    let runs = 0;
    await fc.assert(fc.asyncProperty(fc.constantFrom(...files), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), fc.integer({ min: 1, max: 255 }), async (file, where, mask) => {
      runs++;
      const copy = path.join(tempDir(), 'copy');
      await fsp.cp(root, copy, { recursive: true });
      const target = path.join(copy, file);
      const bytes = readFileSync(target);
      const at = Math.floor(where * bytes.length);
      bytes[at] ^= mask;
      writeFileSync(target, bytes);
      const result = await fsckAuthority(copy, repo);
      expect(result.problems.length, `${file} byte ${at}`).to.be.above(0);
      await fsp.rm(copy, { recursive: true, force: true });
    }), { numRuns: Math.max(60, files.length * 4) });
    expect(runs).to.be.at.least(60);
  });
});

/** A repository with one committed snapshot (object pack, tree pack, locators) on line `dev`. */
async function seed(base: string) {
  const repo = await register(base, 'seeded');
  const blob = Buffer.from('hello fsck\n');
  const bid = blobId(blob);
  const tree = encodeTree([{ name: 'a.txt', kind: 'file', id: bid }]);
  const tid = treeId([{ name: 'a.txt', kind: 'file', id: bid }]);
  const objects = buildPack(PACK_KIND_OBJECT, [{ id: bid, raw: blob }]);
  const trees = buildPack(PACK_KIND_TREE, [{ id: tid, raw: tree }]);
  const snap = encodeSnapshot({ root_tree_id: tid, parent_snapshot_ids: [], created_at_s: 1700000000, message: 'first' });
  const sid = blobId(snap);
  const put = async (kind: string, p: { packId: string; bytes: Buffer }) => {
    const media = kind === 'object-packs' ? 'application/vnd.svc.remote-sync.object-pack+zstd' : 'application/vnd.svc.remote-sync.tree-pack+zstd';
    const r = await api(base, 'PUT', `${REPO(repo)}/remote-sync/zstd-bulk/${kind}/${p.packId}`, { body: p.bytes, headers: { 'content-type': media } });
    expect(r.status, r.text).to.equal(200);
  };
  await put('object-packs', objects);
  await put('tree-packs', trees);
  const loc = (e: { offset: number; length: number; raw_length: number; crc32: number }, packId: string) => ({ pack_id: packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32.toString(16).padStart(8, '0') });
  const commit = await api(base, 'POST', `${REPO(repo)}/remote-sync/zstd-bulk/commit`, { json: {
    contract: 'svc.remote_sync.zstd_bulk.commit.v1', object_packs: [objects.packId], tree_packs: [trees.packId],
    blob_locators: [{ blob_id: bid, ...loc(objects.entries[0], objects.packId) }], tree_locators: [{ tree_id: tid, ...loc(trees.entries[0], trees.packId) }],
    snapshots: [{ snapshot_id: sid, root_tree_id: tid, parent_snapshot_ids: [], created_at_s: 1700000000, message: 'first' }],
    line_update: { line_name: 'dev', head_snapshot_id: sid, expected_head_snapshot_id: null },
  } });
  expect(commit.status, commit.text).to.equal(200);
  return { repo, sid, put };
}

async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await listFiles(path.join(dir, entry.name), rel)));
    else out.push(rel);
  }
  return out;
}
