// The one mirror of storage-layout.md §1 in code: every path the engine uses is built here.
import path from 'node:path';

export class Layout {
  constructor(readonly root: string) {}

  /** proper-lockfile's lock directory: its presence and fresh mtime mean a live owner. */
  get lockDir(): string { return path.join(this.root, 'cairn.lock'); }
  /** PID of the lock owner, so a lock left by a killed process can be recognised as stale at once. */
  get lockOwnerFile(): string { return path.join(this.root, 'cairn.lock.pid'); }
  get registryFile(): string { return path.join(this.root, 'registry.bin'); }
  get repositoriesDir(): string { return path.join(this.root, 'repositories'); }
  repositoryDir(index: number): string { return path.join(this.repositoriesDir, String(index)); }
}

/** Paths inside one repository authority directory; every file an authority owns is below `root`. */
export class AuthorityLayout {
  constructor(readonly root: string) {}
  get identityFile(): string { return path.join(this.root, 'authority.bin'); }
}
