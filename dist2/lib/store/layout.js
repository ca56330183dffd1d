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
};
export class Layout {
    root;
    constructor(root) {
        this.root = root;
    }
    /** proper-lockfile's lock directory: its presence and fresh mtime mean a live owner. */
    get lockDir() { return path.join(this.root, 'cairn.lock'); }
    /** PID of the lock owner, so a lock left by a killed process can be recognised as stale at once. */
    get lockOwnerFile() { return path.join(this.root, 'cairn.lock.pid'); }
    get registryFile() { return path.join(this.root, 'registry.bin'); }
    /** The registry's events (storage-layout.md §18.1), appended after each registry.bin write. */
    get registryEventsFile() { return path.join(this.root, 'registry-events.log'); }
    get repositoriesDir() { return path.join(this.root, 'repositories'); }
    /**
     * The start's sweep of temp files over the data directory looks at this directory's entries
     * but not inside them (an interrupted purge's `.purged-N.tmp-…`): each authority sweeps its
     * own directory when it opens.
     */
    sweepsShallow(dir) { return dir === this.repositoriesDir; }
    repositoryDir(index) { return path.join(this.repositoriesDir, String(index)); }
    /** The archive this data directory ships to and its generation (storage-layout.md §20.3). */
    get archiveFile() { return path.join(this.root, 'archive.json'); }
    /** The key sealed workflow fields are encrypted with (storage-layout.md §17.2): outside every repository directory. */
    get sealKeyFile() { return path.join(this.root, 'seal.key'); }
    /** Accounts, tokens (hashes), groups, repository grants and the audit feed (storage-layout.md §21). */
    get accessLogFile() { return path.join(this.root, 'access.log'); }
    /** When each token was last used (approximate; storage-layout.md §21.2). */
    get tokenUseFile() { return path.join(this.root, 'access-last-used.json'); }
    get tombstonesDir() { return path.join(this.root, 'tombstones'); }
    get restoresDir() { return path.join(this.root, 'restores'); }
    /**
     * Derived git repositories (storage-layout.md §19): one bare repository per authority, outside
     * its directory, so it is never part of a commit point or an export, and rebuilt when missing.
     */
    get gitShadowDir() { return path.join(this.root, 'git-shadow'); }
    gitShadow(index) { return path.join(this.gitShadowDir, `${index}.git`); }
    /**
     * Quarantines of pushes for review (docs/git.md "Push for review"): one temporary bare
     * repository per push, named by a random id, removed after the push and swept at startup.
     */
    get gitQuarantineDir() { return path.join(this.gitShadowDir, 'quarantine'); }
    gitQuarantine(id) { return path.join(this.gitQuarantineDir, `${id}.git`); }
}
/** Paths inside one shadow bare git repository (the files git itself reads). */
export class GitShadowLayout {
    root;
    constructor(root) {
        this.root = root;
    }
    get headFile() { return path.join(this.root, 'HEAD'); }
    get configFile() { return path.join(this.root, 'config'); }
    get objectsDir() { return path.join(this.root, 'objects'); }
    objectFile(id) { return path.join(this.root, 'objects', id.slice(0, 2), id.slice(2)); }
    /** git's pack directory: `pack-<checksum>.pack` and its `.idx` (written by an export or by git repack). */
    get packDir() { return path.join(this.root, 'objects', 'pack'); }
    packFile(checksum, ext) { return path.join(this.root, 'objects', 'pack', `pack-${checksum}.${ext}`); }
    get refsDir() { return path.join(this.root, 'refs'); }
    get headsDir() { return path.join(this.root, 'refs', 'heads'); }
    branchRef(line) { return path.join(this.root, 'refs', 'heads', ...line.split('/')); }
    /** cairn's own temp files (objects written here, then renamed into objects/); emptied before each sync. */
    get tempDir() { return path.join(this.root, 'cairn-tmp'); }
}
export const LOG_NAMES = ['snapshots', 'jobs', 'plans', 'workflow', 'events'];
export const LOG_MAGIC = {
    snapshots: MAGIC.snapshotsLog,
    jobs: MAGIC.jobsLog,
    plans: MAGIC.plansLog,
    workflow: MAGIC.workflowLog,
    events: MAGIC.eventsLog,
};
export const INDEX_NAMES = ['blobs', 'trees', 'snapshots'];
/** Paths inside one repository authority directory; every file an authority owns is below `root`. */
export class AuthorityLayout {
    root;
    constructor(root) {
        this.root = root;
    }
    get identityFile() { return path.join(this.root, 'authority.bin'); }
    get commitFile() { return path.join(this.root, 'commit.bin'); }
    /** The format-v0 commit point, read once by the upgrade at open and then removed. */
    get legacyStateFile() { return path.join(this.root, 'state.bin'); }
    /** A log's file: `<name>.log`, or `<name>.<gen>.log` once a compaction has rewritten it. */
    logFile(name, gen = 0) { return path.join(this.root, gen ? `${name}.${gen}.log` : `${name}.log`); }
    /** The workflow checkpoint: what replaying workflow.log builds, so an open replays only its tail. */
    get workflowCheckpoint() { return path.join(this.root, 'workflow.ckpt'); }
    get indexDir() { return path.join(this.root, 'index'); }
    indexSegment(name, segment) { return path.join(this.indexDir, `${name}.${segment}.idx`); }
    /** A lines checkpoint (format v0 wrote one per change; v1 keeps the upgraded one). */
    linesFile(gen) { return path.join(this.root, `lines.${gen}.bin`); }
    packDir(dir) { return path.join(this.root, 'packs', dir); }
    stagingDir(dir) { return path.join(this.root, 'staging', dir); }
    packFile(dir, id) { return path.join(this.packDir(dir), `${id}.pack`); }
    stagedPackFile(dir, id) { return path.join(this.stagingDir(dir), `${id}.pack`); }
}
export const INDEX_SEGMENT_NAME = /^(blobs|trees|snapshots)\.(\d+)\.idx$/;
export const LINES_FILE_NAME = /^lines\.(\d+)\.bin$/;
export const LOG_FILE_NAME = /^(snapshots|jobs|plans|workflow|events)(?:\.(\d+))?\.log$/;
//# sourceMappingURL=layout.js.map