// The git tree of a stored snapshot (docs/git.md): each cairn tree re-encoded as git's, blobs
// named by their git ids, and the snapshot's submodule entries (gitlinks, kept with its git
// commit) put back where they were. An imported snapshot's git tree is its commit's tree, id for
// id: that is what lets an export keep imported commits as they were. Directory trees with no
// gitlink below them are cached by their cairn id (the same content, the same git tree).
import type { TreeEntry } from '../domain/content.js';
import { encodeGitTree, gitId, type GitHash, type GitTreeEntry } from '../domain/git-objects.js';
import type { Gitlink } from '../domain/git.js';

export interface GitTreeSource {
  readTree(id: string): Promise<TreeEntry[]>;
  readBlob(id: string): Promise<Buffer>;
}

/**
 * Called with each git object built (type, id, canonical bytes, and the path it was first built
 * at: `''` for a root tree), e.g. to write it.
 */
export type GitObjectSink = (type: 'blob' | 'tree', id: string, body: Buffer, where: string) => void | Promise<void>;

export class GitTreeBuilder {
  /** cairn blob id → git blob id. */
  private readonly blobs = new Map<string, string>();
  /** cairn tree id → git tree id (trees with no gitlink below them). */
  private readonly trees = new Map<string, string>();

  /** `maxCached`: each cache is emptied when it grows past this many entries (bounded memory for long exports). */
  constructor(private readonly source: GitTreeSource, private readonly hash: GitHash = 'sha1', private readonly sink?: GitObjectSink, private readonly maxCached = Infinity) {}

  /** The git tree id of cairn tree `root` with `gitlinks` (paths from the root) put back. */
  async treeOf(root: string, gitlinks: readonly Gitlink[] = []): Promise<string> {
    return this.build(root, gitlinks.map((g) => ({ parts: g.path.split('/'), commit_id: g.commit_id })), '');
  }

  private async build(cairnTree: string | null, links: { parts: string[]; commit_id: string }[], where: string): Promise<string> {
    if (cairnTree && links.length === 0) {
      const cached = this.trees.get(cairnTree);
      if (cached) return cached;
    }
    const entries: GitTreeEntry[] = [];
    const here = new Map<string, { parts: string[]; commit_id: string }[]>();
    for (const l of links) {
      if (l.parts.length === 1) entries.push({ kind: 'gitlink', name: l.parts[0], id: l.commit_id });
      else {
        const below = here.get(l.parts[0]) ?? [];
        below.push({ parts: l.parts.slice(1), commit_id: l.commit_id });
        here.set(l.parts[0], below);
      }
    }
    const stored = cairnTree ? await this.source.readTree(cairnTree) : [];
    const below = (name: string) => (where === '' ? name : `${where}/${name}`);
    // Most entries of a changed tree did not change: their ids are found in the caches without
    // an await (a long history is mostly such lookups).
    for (const e of stored) {
      if (e.kind === 'directory') {
        const inner = here.get(e.name);
        entries.push({ kind: 'directory', name: e.name, id: (inner ? undefined : this.trees.get(e.id)) ?? await this.build(e.id, inner ?? [], below(e.name)) });
        here.delete(e.name);
      } else {
        entries.push({ kind: e.kind, name: e.name, id: this.blobs.get(e.id) ?? await this.blob(e.id, below(e.name)) });
      }
    }
    // A directory that holds only submodules has no cairn tree of its own.
    for (const [name, inner] of here) entries.push({ kind: 'directory', name, id: await this.build(null, inner, below(name)) });
    const body = encodeGitTree(entries, this.hash);
    const id = gitId('tree', body, this.hash);
    await this.sink?.('tree', id, body, where);
    if (cairnTree && links.length === 0) {
      if (this.trees.size >= this.maxCached) this.trees.clear();
      this.trees.set(cairnTree, id);
    }
    return id;
  }

  private async blob(cairnBlob: string, where: string): Promise<string> {
    const known = this.blobs.get(cairnBlob);
    if (known) return known;
    const bytes = await this.source.readBlob(cairnBlob);
    const id = gitId('blob', bytes, this.hash);
    await this.sink?.('blob', id, bytes, where);
    if (this.blobs.size >= this.maxCached) this.blobs.clear();
    this.blobs.set(cairnBlob, id);
    return id;
  }
}
