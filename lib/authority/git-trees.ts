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

/** A gitlink below a directory: the rest of its path, and the commit it names. */
interface Link { parts: string[]; commit_id: string }

/** A git tree being built: entries so far, the cairn entries still to go, then the submodule-only directories. */
interface Building {
  cairnTree: string | null;
  /** No gitlink below it: its git id is cached by its cairn id. */
  cached: boolean;
  entries: GitTreeEntry[];
  here: Map<string, Link[]>;
  stored: TreeEntry[];
  next: number;
  rest: [string, Link[]][] | null;
  restNext: number;
  /** The name of the directory entry whose tree is being built above it on the stack. */
  waiting: string | null;
  /** Its path (`''` for the root): where its objects are first built (the pack's delta bases). */
  where: string;
}

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

  /**
   * The git tree of `root` with `rootLinks` below it. Iterative (a stack of directories being
   * built, children before parents): a tree of any depth is built without a frame per level.
   */
  private async build(root: string | null, rootLinks: Link[], where: string): Promise<string> {
    const first = await this.open(root, rootLinks, where);
    if (typeof first === 'string') return first;
    const stack: Building[] = [first];
    let built = '';
    while (stack.length) {
      const f = stack[stack.length - 1];
      if (f.waiting !== null) {
        f.entries.push({ kind: 'directory', name: f.waiting, id: built });
        f.waiting = null;
      }
      let child: { name: string; tree: string | null; links: Link[] } | null = null;
      if (f.next < f.stored.length) {
        const e = f.stored[f.next++];
        // Most entries of a changed tree did not change: their ids are found in the caches without
        // an await (a long history is mostly such lookups).
        if (e.kind !== 'directory') {
          f.entries.push({ kind: e.kind, name: e.name, id: this.blobs.get(e.id) ?? await this.blob(e.id, below(f, e.name)) });
          continue;
        }
        child = { name: e.name, tree: e.id, links: f.here.get(e.name) ?? [] };
        f.here.delete(e.name);
      } else {
        // A directory that holds only submodules has no cairn tree of its own.
        f.rest ??= [...f.here];
        if (f.restNext < f.rest.length) {
          const [name, below] = f.rest[f.restNext++];
          child = { name, tree: null, links: below };
        }
      }
      if (child) {
        const cached = child.tree && child.links.length === 0 ? this.trees.get(child.tree) : undefined;
        const opened = cached ?? await this.open(child.tree, child.links, below(f, child.name));
        if (typeof opened === 'string') f.entries.push({ kind: 'directory', name: child.name, id: opened });
        else {
          f.waiting = child.name;
          stack.push(opened);
        }
        continue;
      }
      stack.pop();
      built = await this.finish(f);
    }
    return built;
  }

  /** A directory to build: its git id at once when cached, else its gitlinks sorted out and its cairn entries read. */
  private async open(cairnTree: string | null, links: Link[], where: string): Promise<Building | string> {
    if (cairnTree && links.length === 0) {
      const cached = this.trees.get(cairnTree);
      if (cached) return cached;
    }
    const entries: GitTreeEntry[] = [];
    const here = new Map<string, Link[]>();
    for (const l of links) {
      if (l.parts.length === 1) entries.push({ kind: 'gitlink', name: l.parts[0], id: l.commit_id });
      else {
        const below = here.get(l.parts[0]) ?? [];
        below.push({ parts: l.parts.slice(1), commit_id: l.commit_id });
        here.set(l.parts[0], below);
      }
    }
    const stored = cairnTree ? await this.source.readTree(cairnTree) : [];
    return { cairnTree, cached: links.length === 0, entries, here, stored, next: 0, rest: null, restNext: 0, waiting: null, where };
  }

  private async finish(f: Building): Promise<string> {
    const body = encodeGitTree(f.entries, this.hash);
    const id = gitId('tree', body, this.hash);
    await this.sink?.('tree', id, body, f.where);
    if (f.cairnTree && f.cached) {
      if (this.trees.size >= this.maxCached) this.trees.clear();
      this.trees.set(f.cairnTree, id);
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

/** The path of `name` in the directory being built. */
function below(f: Building, name: string): string {
  return f.where === '' ? name : `${f.where}/${name}`;
}
