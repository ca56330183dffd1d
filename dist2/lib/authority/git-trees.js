import { encodeGitTree, gitId } from '../domain/git-objects.js';
export class GitTreeBuilder {
    source;
    hash;
    sink;
    maxCached;
    /** cairn blob id → git blob id. */
    blobs = new Map();
    /** cairn tree id → git tree id (trees with no gitlink below them). */
    trees = new Map();
    /** `maxCached`: each cache is emptied when it grows past this many entries (bounded memory for long exports). */
    constructor(source, hash = 'sha1', sink, maxCached = Infinity) {
        this.source = source;
        this.hash = hash;
        this.sink = sink;
        this.maxCached = maxCached;
    }
    /** The git tree id of cairn tree `root` with `gitlinks` (paths from the root) put back. */
    async treeOf(root, gitlinks = []) {
        return this.build(root, gitlinks.map((g) => ({ parts: g.path.split('/'), commit_id: g.commit_id })), '');
    }
    /**
     * The git tree of `root` with `rootLinks` below it. Iterative (a stack of directories being
     * built, children before parents): a tree of any depth is built without a frame per level.
     */
    async build(root, rootLinks, where) {
        const first = await this.open(root, rootLinks, where);
        if (typeof first === 'string')
            return first;
        const stack = [first];
        let built = '';
        while (stack.length) {
            const f = stack[stack.length - 1];
            if (f.waiting !== null) {
                f.entries.push({ kind: 'directory', name: f.waiting, id: built });
                f.waiting = null;
            }
            let child = null;
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
            }
            else {
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
                if (typeof opened === 'string')
                    f.entries.push({ kind: 'directory', name: child.name, id: opened });
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
    async open(cairnTree, links, where) {
        if (cairnTree && links.length === 0) {
            const cached = this.trees.get(cairnTree);
            if (cached)
                return cached;
        }
        const entries = [];
        const here = new Map();
        for (const l of links) {
            if (l.parts.length === 1)
                entries.push({ kind: 'gitlink', name: l.parts[0], id: l.commit_id });
            else {
                const below = here.get(l.parts[0]) ?? [];
                below.push({ parts: l.parts.slice(1), commit_id: l.commit_id });
                here.set(l.parts[0], below);
            }
        }
        const stored = cairnTree ? await this.source.readTree(cairnTree) : [];
        return { cairnTree, cached: links.length === 0, entries, here, stored, next: 0, rest: null, restNext: 0, waiting: null, where };
    }
    async finish(f) {
        const body = encodeGitTree(f.entries, this.hash);
        const id = gitId('tree', body, this.hash);
        await this.sink?.('tree', id, body, f.where);
        if (f.cairnTree && f.cached) {
            if (this.trees.size >= this.maxCached)
                this.trees.clear();
            this.trees.set(f.cairnTree, id);
        }
        return id;
    }
    async blob(cairnBlob, where) {
        const known = this.blobs.get(cairnBlob);
        if (known)
            return known;
        const bytes = await this.source.readBlob(cairnBlob);
        const id = gitId('blob', bytes, this.hash);
        await this.sink?.('blob', id, bytes, where);
        if (this.blobs.size >= this.maxCached)
            this.blobs.clear();
        this.blobs.set(cairnBlob, id);
        return id;
    }
}
/** The path of `name` in the directory being built. */
function below(f, name) {
    return f.where === '' ? name : `${f.where}/${name}`;
}
//# sourceMappingURL=git-trees.js.map