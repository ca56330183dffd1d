// Offline verification of an authority directory (`cairn fsck`): every file the authority holds.
// The commit point and recovery (opening the store); every record of every log inside its
// committed range (snapshots, jobs, plans, workflow); every index segment's checksum and every
// locator against its pack header; every committed and staged pack's hash, header and frames;
// every tree's encoding, children and names (storage-layout.md §6: names a checkout refuses);
// every snapshot's root and parents; every line head; the comment records (comment-check.ts);
// and any file the layout does not name. Temp files of writes cut short are notes: the next
// start removes them (storage-layout.md §3).
// Problems are collected, never repaired silently (--rebuild-locators is an explicit repair).
// Restore runs the same check before adopting a tree.
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import { decodeSnapshot, decodeTree, describeRefusedNames, findRefusedNames, refusedEntryName, RULE_DOT_CAIRN } from '../domain/content.js';
import { decodeAuthorityFile } from './authority-file.js';
import { ContentStore, type ObjectKind } from './content-store.js';
import { findTempFiles, isTempName } from './durable.js';
import { decodeJobBody, replayJobRecords } from './job-log.js';
import { decodeEvent } from './event-log.js';
import { AuthorityLayout, INDEX_SEGMENT_NAME, LINES_FILE_NAME, LOG_FILE_NAME, LOG_NAMES, type LogName } from './layout.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE, PackVerifier, type PackEntry, type PackKind } from './pack.js';
import { checkDecisionChain, checkGitCommits, checkViewedMarks, checkGitMirrors, checkRepositoryRules } from './workflow-check.js';
import { checkComments } from './comment-check.js';
import { MAX_RECORDED_SIZE } from './index-file.js';
import { describeOverLimit, expandedSize, Pace, pathsOf } from '../domain/tree-size.js';
import { CHECKPOINT_VERSION, checkpointVersion, decodeCheckpoint, readCheckpointFile } from './workflow-checkpoint.js';
import { unopenedFields, type SealKey } from '../domain/sealing.js';
import { findTooDeep, MAX_TREE_DEPTH, tooDeep } from '../domain/tree-depth.js';
import { WorkflowIndexes } from '../domain/workflow/indexes.js';
import { CHANGE, PATCHSET, TASK, type ChangeRecord, type TaskRecord } from '../domain/workflow/rules.js';
import { COMMENT } from '../domain/workflow/comment-rules.js';
import { REVIEW } from '../domain/workflow/review-rules.js';
import { INDEX_SECTION } from '../domain/workflow/indexes.js';
import { PEOPLE_SECTION, rebuildPeople } from '../domain/workflow/people-index.js';
import { REVIEW_SECTION, ReviewIndex } from '../domain/workflow/review-index.js';
import { LAND_SECTION, LandIndex } from '../domain/workflow/land-index.js';
import { SEARCH_SECTION, SearchIndex, type SearchPatchset, type SearchReview } from '../domain/workflow/search-index.js';
import { encodeActive, isActiveEntry, QUEUE_ENTRY, QUEUE_SECTION, queueSectionSequences, type QueueEntryRecord } from '../domain/workflow/land-queue.js';

export interface FsckResult {
  problems: string[];
  notes: string[];
  counts: { packs: number; blobs: number; trees: number; snapshots: number; lines: number };
}

export interface FsckOptions {
  rebuildLocators?: boolean;
  /** Paths a snapshot may hold (lib/domain/tree-size.ts; default DEFAULT_MAX_SNAPSHOT_PATHS): a snapshot over it is a problem. */
  maxSnapshotPaths?: number;
  /** The data directory's seal key (DATA/seal.key), so sealed drafts read as drafts (storage-layout.md §17.2); nothing sealed is ever printed. */
  sealKey?: SealKey | null;
}

/** How fsck names a temp file the next start removes (a write cut short: never acknowledged data). */
export function tempFileNote(rel: string): string {
  return `${rel}: temp file of a write that did not finish (an upload, a commit, a rewrite); removed at the next start`;
}

export async function fsckAuthority(root: string, index: number, options: FsckOptions = {}): Promise<FsckResult> {
  const problems: string[] = [];
  const result: FsckResult = { problems, notes: [], counts: { packs: 0, blobs: 0, trees: 0, snapshots: 0, lines: 0 } };
  // What Authority.open's sweep removes before anything reads the directory (looked at first:
  // opening the store below runs the rest of recovery, which leaves temp files alone).
  for (const file of await findTempFiles(root)) result.notes.push(tempFileNote(path.relative(root, file)));
  try {
    const identity = decodeAuthorityFile(await fsp.readFile(new AuthorityLayout(root).identityFile));
    if (identity.repository_index !== index) problems.push(`authority.bin names repository ${identity.repository_index}`);
  } catch (err) {
    problems.push(`authority.bin: ${(err as Error).message}`);
  }
  let store: ContentStore;
  try {
    const opened = await ContentStore.open(root, { rebuildingLocators: options.rebuildLocators, checkpoint: false, maxSnapshotPaths: options.maxSnapshotPaths, sealKey: options.sealKey ?? null });
    store = opened.store;
    result.notes.push(...opened.notes);
    const unopened = countUnopened(store, options.sealKey ?? null);
    if (unopened) result.notes.push(`workflow.log holds ${unopened} sealed values ${options.sealKey ? 'that DATA/seal.key does not open (sealed with another server\'s key)' : 'and the data directory has no DATA/seal.key'}: such webhooks need their secrets registered again and such drafts read as discarded (storage-layout.md §17.2)`);
    if (store.fieldsInClear > 0) result.notes.push(`workflow.log holds ${store.fieldsInClear} webhook or draft records in clear, written by a server from before sealing; the next start seals them (storage-layout.md §17.2)`);
  } catch (err) {
    problems.push(`content store does not open: ${(err as Error).message}`);
    return result;
  }
  try {
    if (options.rebuildLocators) {
      const counts = await store.rebuildLocators();
      result.notes.push(`rebuilt locators from pack headers: ${counts.blobs} blobs, ${counts.trees} trees`);
      for (const pack of counts.skipped) problems.push(`rebuild skipped ${pack}`);
    }
    try {
      store.verifyIndexes();
    } catch (err) {
      problems.push((err as Error).message.replace(root + '/', ''));
    }
    problems.push(...checkLogs(store, index));
    const ck = await checkWorkflowCheckpoint(store);
    problems.push(...ck.problems);
    result.notes.push(...ck.notes);
    problems.push(...checkDecisionChain(store));
    problems.push(...checkGitCommits(store));
    problems.push(...checkGitMirrors(store));
    problems.push(...checkRepositoryRules(store));
    problems.push(...checkComments(store));
    problems.push(...checkViewedMarks(store));
    problems.push(...(await unexpectedFiles(store)));
    // Staged packs are files the authority holds too: each must be a whole, verified pack.
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      for (const name of await fsp.readdir(store.stagingDir(kind))) {
        if (isTempName(name)) continue; // an upload cut short: a note above
        const id = name.replace(/\.pack$/, '');
        const label = `staged ${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${name}`;
        try {
          const verifier = new PackVerifier(kind);
          for await (const chunk of createReadStream(path.join(store.stagingDir(kind), name))) verifier.update(chunk as Buffer);
          const verified = verifier.finish();
          if (verified.packId !== id) problems.push(`${label}: content hashes to ${verified.packId}`);
        } catch (err) {
          problems.push(`${label}: ${(err as Error).message}`);
        }
      }
    }
    // Every committed pack, streamed through the same verifier uploads use. The header is read
    // on its own too, so a pack with a damaged frame still lets its locators be checked.
    const headers = new Map<string, Map<string, PackEntry> | null>();
    for (const kind of [PACK_KIND_OBJECT, PACK_KIND_TREE] as PackKind[]) {
      for (const id of store.committedPackIds(kind)) {
        result.counts.packs++;
        const label = `${kind === PACK_KIND_OBJECT ? 'object' : 'tree'} pack ${id}`;
        try {
          const { header } = await store.packHeader(kind, id);
          headers.set(`${kind}:${id}`, new Map(header.entries.map((e) => [e.id, e])));
        } catch {
          headers.set(`${kind}:${id}`, null);
        }
        try {
          const verifier = new PackVerifier(kind);
          for await (const chunk of createReadStream(store.packFile(kind, id))) verifier.update(chunk as Buffer);
          const verified = verifier.finish();
          if (verified.packId !== id) problems.push(`${label}: content hashes to ${verified.packId}`);
        } catch (err) {
          problems.push(`${label}: ${(err as Error).message}`);
        }
      }
    }
    // Every locator against its pack's header; every tree's children, names and recorded size.
    let refusedNames = false;
    const refusedAtTop = new Set<string>();
    // Expanded sizes (lib/domain/tree-size.ts): recorded ones, else computed here once per tree
    // (a whole-store check keeps them all: a bounded cache could read trees over and over).
    const computed = new Map<string, number>();
    // Upper bounds on tree depths (lib/domain/tree-depth.ts), learned once per tree as sizes are.
    const depths = new Map<string, number>();
    const knownPaths = (t: string) => {
      const size = store.locator('tree', t)?.expanded || computed.get(t);
      return size === undefined ? undefined : pathsOf(size);
    };
    const pace = new Pace();
    const sizeOf = (id: string) => expandedSize(id, (t) => store.readTree(t), (t) => store.locator('tree', t)?.expanded ?? computed.get(t), (t, n) => computed.set(t, n), pace);
    for (const kind of ['blob', 'tree'] as ObjectKind[]) {
      const packKind = kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
      const unreadable = new Map<string, number>();
      for (const loc of [...store.locators(kind)]) {
        result.counts[kind === 'blob' ? 'blobs' : 'trees']++;
        if (pace.tick()) await pace.pause();
        const header = headers.get(`${packKind}:${loc.pack_id}`);
        if (!header) {
          unreadable.set(loc.pack_id, (unreadable.get(loc.pack_id) ?? 0) + 1);
          continue;
        }
        const entry = header.get(loc.id);
        if (!entry || entry.offset !== loc.offset || entry.length !== loc.length || entry.raw_length !== loc.raw_length || entry.crc32 !== loc.crc32) {
          problems.push(`${kind} ${loc.id}: locator disagrees with the header of pack ${loc.pack_id}`);
          continue;
        }
        if (kind === 'tree') {
          try {
            const entries = decodeTree(await store.readLocated(loc));
            if (loc.expanded !== undefined) {
              // The size recorded at commit against its entries (each child's recorded size is checked as that child).
              let size = 1;
              for (const e of entries) size += e.kind === 'directory' && store.has('tree', e.id) ? await sizeOf(e.id) : 1;
              if (Math.min(size, MAX_RECORDED_SIZE) !== loc.expanded) problems.push(`tree ${loc.id}: recorded expanded size ${loc.expanded}, its entries give ${size}`);
            }
            for (const child of entries) {
              const childKind: ObjectKind = child.kind === 'directory' ? 'tree' : 'blob';
              if (!store.has(childKind, child.id)) problems.push(`tree ${loc.id}: ${childKind} ${child.id} (${child.name}) is not present`);
              // A name a checkout must not write (storage-layout.md §6): stored before the server
              // refused it. Reported, never cut away: the ids of everything above depend on it.
              if (refusedEntryName(child.name, true)) {
                const rule = refusedEntryName(child.name, false);
                if (rule) {
                  problems.push(`tree ${loc.id}: entry ${JSON.stringify(child.name)} is refused: it ${rule}`);
                  refusedNames = true;
                } else refusedAtTop.add(loc.id);
              }
            }
          } catch (err) {
            problems.push(`tree ${loc.id}: ${(err as Error).message}`);
          }
        }
      }
      for (const [pack, n] of unreadable) problems.push(`${n} ${kind} locator(s) point into pack ${pack}, whose header is missing or unreadable`);
    }
    for (const id of [...store.snapshotIds()]) {
      result.counts.snapshots++;
      try {
        const s = store.snapshot(id)!;
        if (!store.has('tree', s.root_tree_id)) problems.push(`snapshot ${id}: root tree ${s.root_tree_id} is not present`);
        else {
          // Stored before the limit existed (or under a higher --max-snapshot-paths): reads refuse to expand it.
          const paths = pathsOf(await sizeOf(s.root_tree_id));
          if (paths > store.maxSnapshotPaths) problems.push(`snapshot ${id}: ${describeOverLimit('its tree', paths, store.maxSnapshotPaths)}`);
          // Stored before the depth rule: reads walk it (iteratively), ingest would refuse it.
          const deep = await findTooDeep(s.root_tree_id, (t) => store.readTree(t), (t) => depths.get(t) ?? knownPaths(t), (t, d) => depths.set(t, d), MAX_TREE_DEPTH, pace);
          if (deep !== null) problems.push(`snapshot ${id}: ${tooDeep('its tree', deep).message}`);
        }
        if (refusedAtTop.has(s.root_tree_id)) {
          problems.push(`snapshot ${id}: root tree ${s.root_tree_id} has an entry that ${RULE_DOT_CAIRN}: a checkout refuses it`);
          refusedNames = true;
        }
        for (const p of s.parent_snapshot_ids) if (!store.hasSnapshot(p)) problems.push(`snapshot ${id}: parent ${p} is not present`);
      } catch (err) {
        problems.push(`snapshot ${id}: ${(err as Error).message}`);
      }
    }
    for (const line of store.lines()) {
      result.counts.lines++;
      if (line.head_snapshot_id && !store.hasSnapshot(line.head_snapshot_id)) problems.push(`line ${line.name}: head ${line.head_snapshot_id} is not present`);
      else if (refusedNames && line.head_snapshot_id) {
        // Which paths a checkout of the line would refuse (walked only when some tree holds one).
        try {
          const found = await findRefusedNames(store.snapshot(line.head_snapshot_id)!.root_tree_id, async (tree) => {
            const entries = await store.readTree(tree);
            if (pace.tick(entries.length)) await pace.pause();
            return entries;
          });
          if (found.length) problems.push(`line ${line.name}: head ${line.head_snapshot_id} holds names a checkout refuses: ${describeRefusedNames(found)}`);
        } catch (err) {
          problems.push(`line ${line.name}: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    store.close();
  }
  return result;
}

/** Every record of every log inside its committed range, decoded as its owner would. */
function checkLogs(store: ContentStore, repositoryIndex: number): string[] {
  const problems: string[] = [];
  const decoders: Record<LogName, (body: Buffer) => void> = {
    snapshots: (body) => { decodeSnapshot(body); },
    jobs: (body) => { decodeJobBody(body); },
    plans: (body) => { JSON.parse(body.toString('utf8')); },
    workflow: (body) => {
      const txn = JSON.parse(body.toString('utf8'));
      if (!txn || typeof txn.at_s !== 'number' || !Array.isArray(txn.upserts)) throw new Error('not a transaction record');
      for (const u of txn.upserts) if (typeof u?.type !== 'string' || typeof u?.id !== 'string') throw new Error('an upsert without type and id');
    },
    events: (body) => { decodeEvent(body, 'event'); },
  };
  // events.log: gap-free sequence numbers ending at the commit point's event_count, times never decreasing.
  try {
    const state = store.commitState;
    let expected = 0;
    let lastAt = 0;
    for (const rec of store.logRecords('events')) {
      let e;
      try {
        e = decodeEvent(rec.body, 'event');
      } catch {
        continue; // reported by the decoder pass below
      }
      if (expected && e.seq !== expected) problems.push(`events.log: record at byte ${rec.offset} has seq ${e.seq}, expected ${expected}`);
      if (e.at_us < lastAt) problems.push(`events.log: record at byte ${rec.offset} is older than the record before it`);
      expected = e.seq + 1;
      lastAt = e.at_us;
    }
    if (expected && expected - 1 !== state.event_count) problems.push(`events.log ends at seq ${expected - 1}, commit.bin counts ${state.event_count} events`);
    if (!expected && state.logs.events > 12 ) problems.push('events.log holds bytes but no events');
  } catch (err) {
    problems.push((err as Error).message);
  }
  // jobs.log as the job queue replays it (repository index, new job indexes ascending).
  try {
    replayJobRecords(store.logRecords('jobs'), repositoryIndex);
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const name of LOG_NAMES) {
    let count = 0;
    try {
      for (const rec of store.logRecords(name)) {
        count++;
        try {
          decoders[name](rec.body);
        } catch (err) {
          problems.push(`${name}.log: record at byte ${rec.offset} does not decode: ${(err as Error).message}`);
        }
      }
    } catch (err) {
      problems.push((err as Error).message);
    }
    if (name === 'snapshots' && count !== store.snapshotCount) problems.push(`snapshots.log holds ${count} records, commit.bin says ${store.snapshotCount}`);
  }
  return problems;
}

/** Sealed values in workflow.log's records (every upsert, superseded or not) that `key` does not open. */
function countUnopened(store: ContentStore, key: SealKey | null): number {
  let n = 0;
  for (const rec of store.logRecords('workflow')) {
    if (!rec.body.includes('"sealed":')) continue; // most records hold nothing sealed: not parsed again
    let txn: { upserts?: { type: string; id: string; body: unknown }[] };
    try {
      txn = JSON.parse(rec.body.toString('utf8'));
    } catch {
      continue; // a damaged record is reported by checkLogs
    }
    for (const u of Array.isArray(txn?.upserts) ? txn.upserts : []) n += unopenedFields(key, u?.type, u?.id, u?.body);
  }
  return n;
}

/**
 * workflow.ckpt (storage-layout.md §17.1), when present: whole (its CRC-32 covers every byte),
 * and equal byte for byte to the checkpoint rebuilt by replaying workflow.log up to the point
 * it names. One of another log file, or beyond the committed length, is only stale (an open
 * rebuilds it): a note, not a problem.
 */
async function checkWorkflowCheckpoint(store: ContentStore): Promise<{ problems: string[]; notes: string[] }> {
  const data = readCheckpointFile(store.layout.workflowCheckpoint);
  if (!data) return { problems: [], notes: [] };
  const version = checkpointVersion(data);
  if (version !== null && version < CHECKPOINT_VERSION) return { problems: [], notes: [`workflow.ckpt is of version ${version}, an older format; the next open rebuilds it`] };
  let ck;
  try {
    ck = decodeCheckpoint(data);
  } catch (err) {
    return { problems: [`workflow.ckpt: ${(err as Error).message}`], notes: [] };
  }
  const state = store.commitState;
  if (ck.cover.log_file !== state.log_files.workflow || ck.cover.length > state.logs.workflow) {
    return { problems: [], notes: ['workflow.ckpt is of an older workflow.log; the next open rebuilds it'] };
  }
  // `legacyQueue`: the land-queue section as checkpoints before it named ejected entries wrote
  // it (active entries only), still a true cache: the next checkpoint writes the current form.
  const rebuild = (legacyQueue: boolean) => store.rebuildCheckpoint(ck.cover, (records) => {
      const sections = new Map<string, Buffer>();
      for (const name of ck.sections.keys()) {
        if (name === 'records') continue;
        if (name === INDEX_SECTION) {
          const tasks = [...records.entries<TaskRecord>(TASK)].map(([, t]) => t);
          const changes = [...records.entries<ChangeRecord>(CHANGE)].map(([, c]) => c);
          sections.set(name, WorkflowIndexes.rebuild(tasks, changes).encode());
        } else if (name === PEOPLE_SECTION) {
          sections.set(name, rebuildPeople([...records.entries<ChangeRecord>(CHANGE)].map(([, c]) => c)).encode());
        } else if (name === REVIEW_SECTION) {
          sections.set(name, ReviewIndex.rebuild((type) => records.entries(type)).encode());
        } else if (name === SEARCH_SECTION) {
          const changes = [...records.entries<ChangeRecord>(CHANGE)].map(([, c]) => c);
          const lists = SearchIndex.rebuild({
            changes,
            patchsets: (function* () { for (const [, p] of records.entries<SearchPatchset>(PATCHSET)) yield p; })(),
            reviews: (function* () { for (const [, r] of records.entries<SearchReview>(REVIEW)) yield r; })(),
            commentIds: (function* () { for (const [id] of records.locations(COMMENT)) yield id; })(),
          });
          sections.set(name, lists.encode(changes.length));
        } else if (name === LAND_SECTION) {
          const lands = new LandIndex();
          for (const [, l] of records.entries<{ sequence: number; change_id: string }>('land')) lands.add(l.sequence, Number(l.change_id.slice(l.change_id.lastIndexOf('-') + 1)));
          sections.set(name, lands.encode());
        } else if (name === QUEUE_SECTION) {
          const entries = [...records.entries<QueueEntryRecord>(QUEUE_ENTRY)].map(([, e]) => e);
          sections.set(name, encodeActive(legacyQueue ? entries.filter(isActiveEntry).map((e) => e.sequence).sort((a, b) => a - b) : queueSectionSequences(entries)));
        } else {
          throw new Error(`unknown section ${name}`);
        }
      }
      return sections;
    });
  let expected: Buffer;
  try {
    expected = await rebuild(false);
    if (!expected.equals(data) && ck.sections.has(QUEUE_SECTION) && (await rebuild(true)).equals(data)) {
      return { problems: [], notes: ['workflow.ckpt names only the active land-queue entries (an older form); the next checkpoint adds the ejected ones'] };
    }
  } catch (err) {
    return { problems: [`workflow.ckpt: the rebuild from workflow.log fails: ${(err as Error).message}`], notes: [] };
  }
  if (expected.equals(data)) return { problems: [], notes: [] };
  let at = 0;
  while (at < Math.min(expected.length, data.length) && expected[at] === data[at]) at++;
  return { problems: [`workflow.ckpt does not match the checkpoint rebuilt from workflow.log (first difference at byte ${at})`], notes: [] };
}

/** Files under the authority that the layout does not name (after recovery removed stale ones). */
async function unexpectedFiles(store: ContentStore): Promise<string[]> {
  const expected = (rel: string): boolean => {
    const parts = rel.split('/');
    if (parts.length === 1) return rel === 'authority.bin' || rel === 'commit.bin' || rel === 'workflow.ckpt' || LOG_FILE_NAME.test(rel) || LINES_FILE_NAME.test(rel);
    if (parts.length === 2 && parts[0] === 'index') return INDEX_SEGMENT_NAME.test(parts[1]);
    if (parts.length === 3 && (parts[0] === 'packs' || parts[0] === 'staging') && (parts[1] === 'objects' || parts[1] === 'trees')) return /^[0-9a-f]{64}\.pack$/.test(parts[2]);
    return false;
  };
  const files = await fg('**', { cwd: store.root, dot: true, onlyFiles: true, followSymbolicLinks: false });
  return files.filter((f) => !isTempName(path.basename(f)) && !expected(f)).sort().map((f) => `unexpected file ${f}`);
}
