// The one mirror of storage-layout.md §1 in code: every path the engine uses, and every file
// magic, is named here (restic's layout_default.go is the model). Nothing else builds a path
// inside a data directory.
import path from 'node:path';

/** File magics (8 ASCII bytes each), by file kind. */
export const MAGIC = {
  registry: 'CAIRNREG',
  authority: 'CAIRNAUT',
  commitPoint: 'CAIRNCMT',
  legacyState: 'CAIRNSTA',
  lines: 'CAIRNLIN',
  index: 'CAIRNIDX',
  snapshotsLog: 'CAIRNSNL',
  jobsLog: 'CAIRNJOB',
  plansLog: 'CAIRNPLN',
  workflowLog: 'CAIRNWFL',
  eventsLog: 'CAIRNEVT',
  /** workflow.ckpt: the workflow checkpoint (storage-layout.md §17.1). */
  workflowCheckpoint: 'CAIRNWCK',
  registryEventsLog: 'CAIRNREV',
  /** access.log: accounts, tokens, groups, grants and the audit feed (storage-layout.md §21). */
  accessLog: 'CAIRNACC',
  /** Inside a pack's skippable header frame (storage-layout.md §7). */
  pack: 'CAIRNPAK',
} as const;

export class Layout {
  constructor(readonly root: string) {}

  /** proper-lockfile's lock directory: its presence and fresh mtime mean a live owner. */
  get lockDir(): string { return path.join(this.root, 'cairn.lock'); }
  /** PID of the lock owner, so a lock left by a killed process can be recognised as stale at once. */
  get lockOwnerFile(): string { return path.join(this.root, 'cairn.lock.pid'); }
  get registryFile(): string { return path.join(this.root, 'registry.bin'); }
  /** The registry's events (storage-layout.md §18.1), appended after each registry.bin write. */
  get registryEventsFile(): string { return path.join(this.root, 'registry-events.log'); }
  get repositoriesDir(): string { return path.join(this.root, 'repositories'); }
  /**
   * The start's sweep of temp files over the data directory looks at this directory's entries
   * but not inside them (an interrupted purge's `.purged-N.tmp-…`): each authority sweeps its
   * own directory when it opens.
   */
  sweepsShallow(dir: string): boolean { return dir === this.repositoriesDir; }
  repositoryDir(index: number): string { return path.join(this.repositoriesDir, String(index)); }
  /** serve --cluster: a node's work on repositories moving in and out (storage-layout.md §20.12). */
  get clusterDir(): string { return path.join(this.root, 'cluster'); }
  /** A repository copied here from another node's archive before it moves (or fails over) to this node. */
  clusterIncoming(index: number): string { return path.join(this.root, 'cluster', 'incoming', String(index)); }
  /** A repository installed here whose flip's outcome is not settled yet: {"from", "kind"}. */
  clusterArrival(index: number): string { return path.join(this.root, 'cluster', 'incoming', `${index}.json`); }
  /** This node's copy of a repository that moved (or failed over) to another node, set aside, never served. */
  clusterDisplaced(index: number, stamp: string): string { return path.join(this.root, 'cluster', 'displaced', `${index}-${stamp}`); }
  /** A repository this node is handing to another node: its writes held until the move ends. */
  clusterHandoff(index: number): string { return path.join(this.root, 'cluster', 'handoffs', `${index}.json`); }
  get clusterHandoffsDir(): string { return path.join(this.root, 'cluster', 'handoffs'); }
  /** Marks of the repositories this node holds as read replicas of another node's (empty files named by index). */
  get clusterReplicasDir(): string { return path.join(this.root, 'cluster', 'replicas'); }
  clusterReplicaMark(index: number): string { return path.join(this.root, 'cluster', 'replicas', String(index)); }
  /** The archive this data directory ships to and its generation (storage-layout.md §20.3). */
  get archiveFile(): string { return path.join(this.root, 'archive.json'); }
  /** serve --lease: the id floors read from etcd at the last takeover (storage-layout.md §20.8). */
  get idFloorsFile(): string { return path.join(this.root, 'id-floors.json'); }
  /** The key sealed workflow fields are encrypted with (storage-layout.md §17.2): outside every repository directory. */
  get sealKeyFile(): string { return path.join(this.root, 'seal.key'); }
  /** Accounts, tokens (hashes), groups, repository grants and the audit feed (storage-layout.md §21). */
  get accessLogFile(): string { return path.join(this.root, 'access.log'); }
  /** When each token was last used (approximate; storage-layout.md §21.2). */
  get tokenUseFile(): string { return path.join(this.root, 'access-last-used.json'); }
  get tombstonesDir(): string { return path.join(this.root, 'tombstones'); }
  get restoresDir(): string { return path.join(this.root, 'restores'); }
  /**
   * Derived git repositories (storage-layout.md §19): one bare repository per authority, outside
   * its directory, so it is never part of a commit point or an export, and rebuilt when missing.
   */
  get gitShadowDir(): string { return path.join(this.root, 'git-shadow'); }
  gitShadow(index: number): string { return path.join(this.gitShadowDir, `${index}.git`); }
  /**
   * Quarantines of pushes for review (docs/git.md "Push for review"): one temporary bare
   * repository per push, named by a random id, removed after the push and swept at startup.
   */
  get gitQuarantineDir(): string { return path.join(this.gitShadowDir, 'quarantine'); }
  gitQuarantine(id: string): string { return path.join(this.gitQuarantineDir, `${id}.git`); }
}

/** Paths inside one shadow bare git repository (the files git itself reads). */
export class GitShadowLayout {
  constructor(readonly root: string) {}
  get headFile(): string { return path.join(this.root, 'HEAD'); }
  get configFile(): string { return path.join(this.root, 'config'); }
  get objectsDir(): string { return path.join(this.root, 'objects'); }
  objectFile(id: string): string { return path.join(this.root, 'objects', id.slice(0, 2), id.slice(2)); }
  /** git's pack directory: `pack-<checksum>.pack` and its `.idx` (written by an export or by git repack). */
  get packDir(): string { return path.join(this.root, 'objects', 'pack'); }
  packFile(checksum: string, ext: 'pack' | 'idx'): string { return path.join(this.root, 'objects', 'pack', `pack-${checksum}.${ext}`); }
  get refsDir(): string { return path.join(this.root, 'refs'); }
  get headsDir(): string { return path.join(this.root, 'refs', 'heads'); }
  branchRef(line: string): string { return path.join(this.root, 'refs', 'heads', ...line.split('/')); }
  /** A patchset's ref, `refs/changes/<nn>/<change>/<ps>` (patchsetRefName). */
  changesRef(refName: string): string { return path.join(this.root, ...refName.split('/')); }
  get changesDir(): string { return path.join(this.root, 'refs', 'changes'); }
  /** An imported tag's ref, `refs/tags/<name>`. */
  tagRef(name: string): string { return path.join(this.root, 'refs', 'tags', ...name.split('/')); }
  /** cairn's own temp files (objects written here, then renamed into objects/); emptied before each sync. */
  get tempDir(): string { return path.join(this.root, 'cairn-tmp'); }
}

/** The logs an authority's commit point covers (storage-layout.md §9). */
export type LogName = 'snapshots' | 'jobs' | 'plans' | 'workflow' | 'events';
export const LOG_NAMES: readonly LogName[] = ['snapshots', 'jobs', 'plans', 'workflow', 'events'];
export const LOG_MAGIC: Record<LogName, string> = {
  snapshots: MAGIC.snapshotsLog,
  jobs: MAGIC.jobsLog,
  plans: MAGIC.plansLog,
  workflow: MAGIC.workflowLog,
  events: MAGIC.eventsLog,
};

/** Kinds of sorted index (storage-layout.md §8); each is a list of segment files. */
export type IndexName = 'blobs' | 'trees' | 'snapshots';
export const INDEX_NAMES: readonly IndexName[] = ['blobs', 'trees', 'snapshots'];

/** Pack kinds by directory name: 1 object packs (blobs), 2 tree packs. */
export type PackDirName = 'objects' | 'trees';

/** Paths inside one repository authority directory; every file an authority owns is below `root`. */
export class AuthorityLayout {
  constructor(readonly root: string) {}
  get identityFile(): string { return path.join(this.root, 'authority.bin'); }
  get commitFile(): string { return path.join(this.root, 'commit.bin'); }
  /** The format-v0 commit point, read once by the upgrade at open and then removed. */
  get legacyStateFile(): string { return path.join(this.root, 'state.bin'); }
  /** A log's file: `<name>.log`, or `<name>.<gen>.log` once a compaction has rewritten it. */
  logFile(name: LogName, gen = 0): string { return path.join(this.root, gen ? `${name}.${gen}.log` : `${name}.log`); }
  /** The workflow checkpoint: what replaying workflow.log builds, so an open replays only its tail. */
  get workflowCheckpoint(): string { return path.join(this.root, 'workflow.ckpt'); }
  get indexDir(): string { return path.join(this.root, 'index'); }
  indexSegment(name: IndexName, segment: number): string { return path.join(this.indexDir, `${name}.${segment}.idx`); }
  /** A lines checkpoint (format v0 wrote one per change; v1 keeps the upgraded one). */
  linesFile(gen: number): string { return path.join(this.root, `lines.${gen}.bin`); }
  packDir(dir: PackDirName): string { return path.join(this.root, 'packs', dir); }
  stagingDir(dir: PackDirName): string { return path.join(this.root, 'staging', dir); }
  packFile(dir: PackDirName, id: string): string { return path.join(this.packDir(dir), `${id}.pack`); }
  stagedPackFile(dir: PackDirName, id: string): string { return path.join(this.stagingDir(dir), `${id}.pack`); }
}

export const INDEX_SEGMENT_NAME = /^(blobs|trees|snapshots)\.(\d+)\.idx$/;
export const LINES_FILE_NAME = /^lines\.(\d+)\.bin$/;
export const LOG_FILE_NAME = /^(snapshots|jobs|plans|workflow|events)(?:\.(\d+))?\.log$/;
