// `cairn import-git`: a git repository's first-parent history onto a line, one snapshot per
// commit, oldest first, each recorded with its git commit (docs/git.md); before each merge, the
// commits it brought in, as snapshots on no line (so an export can keep the merge's id). The client reads git
// (lib/client/git-source.ts), keeps the tree of the commit being imported in memory (one node per
// path of that tree, never the history's), re-encodes only the directories a commit changed,
// packs the blobs and trees the server does not hold, and commits a batch of commits at a time
// (POST {repo}/git/imports: snapshots, their git commits and the line move in one transaction,
// the line moved by compare-and-set). A batch is all or nothing, so an interrupted import
// resumes from the line's head: the head's git commit says where in the history it stands.
import { requirePathDepth } from '../domain/tree-depth.js';
import { blobId, encodeTree, MAX_MESSAGE_BYTES, refusedEntryName, sha256Hex, snapshotId } from '../domain/content.js';
import { GOVERNED_LINE } from '../domain/lines.js';
import { gitModeKind, parseCommit, snapshotMessage } from '../domain/git.js';
import { PACK_KIND_OBJECT, PACK_KIND_TREE } from '../store/pack.js';
import { CairnClient, ServerError } from './http.js';
import { gitBinary, gitRun, GitUnavailable, ObjectReader, treeChanges, treeEntries } from './git-source.js';
import { listSnapshot, locatorFields, PackPipeline, packRow } from './transfer.js';
import { NO_PROGRESS } from './progress.js';
const COMMIT_CONTRACT = 'svc.remote_sync.zstd_bulk.commit.v1';
/** The staging line of an import onto the governed line: `git-import/main`. */
export const STAGING_PREFIX = 'git-import/';
/** Commits per import request (one transaction on the server). */
export const IMPORT_BATCH_COMMITS = 500;
/** New objects per import request: the request's locator rows stay a few MiB. */
const IMPORT_BATCH_OBJECTS = 50_000;
/** The line holds history that is not this git history, or moved meanwhile: nothing is written. */
export class ImportRefused extends Error {
}
/** A commit holds a path a cairn tree cannot store (not UTF-8, or a name a checkout must not write). */
export class UnstorablePath extends Error {
}
const isDir = (n) => n.entries !== undefined;
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
function pathText(path, commit) {
    let text;
    try {
        text = STRICT_UTF8.decode(path);
    }
    catch {
        throw new UnstorablePath(`commit ${commit} has the path ${JSON.stringify(path.toString('latin1'))}, which is not UTF-8: a cairn tree names paths in UTF-8 (rename it in git first)`);
    }
    return text;
}
/** The tree of the commit being imported, with the ids of the directories it did not change kept. */
class WorkingTree {
    root = { entries: new Map(), id: null };
    gitlinks = new Map();
    walk(parts, create) {
        const chain = [this.root];
        for (const name of parts.slice(0, -1)) {
            const dir = chain[chain.length - 1];
            let next = dir.entries.get(name);
            if (!next || !isDir(next)) {
                if (!create)
                    return null;
                next = { entries: new Map(), id: null };
                dir.entries.set(name, next); // a file in the way was removed first (deletions come first)
            }
            chain.push(next);
        }
        return chain;
    }
    set(path, node) {
        const parts = path.split('/');
        const chain = this.walk(parts, true);
        for (const d of chain)
            d.id = null;
        chain[chain.length - 1].entries.set(parts[parts.length - 1], node);
    }
    remove(path) {
        const parts = path.split('/');
        const chain = this.walk(parts, false);
        if (!chain)
            return;
        for (const d of chain)
            d.id = null;
        chain[chain.length - 1].entries.delete(parts[parts.length - 1]);
        // Git has no empty directories: drop the ones this removal emptied.
        for (let i = chain.length - 1; i > 0 && chain[i].entries.size === 0; i--)
            chain[i - 1].entries.delete(parts[i - 1]);
    }
    /**
     * The root tree's id; `emit` gets each directory re-encoded since the last call, children
     * before parents. Iterative (a stack of directories), whatever the depth of the tree.
     */
    rootId(emit) {
        if (this.root.id)
            return this.root.id;
        const stack = [{ dir: this.root, ready: false }];
        while (stack.length) {
            const top = stack[stack.length - 1];
            if (!top.ready) {
                top.ready = true;
                for (const node of top.dir.entries.values())
                    if (isDir(node) && !node.id)
                        stack.push({ dir: node, ready: false });
                continue;
            }
            stack.pop();
            const entries = [];
            for (const [name, node] of top.dir.entries)
                entries.push(isDir(node) ? { name, kind: 'directory', id: node.id } : { name, kind: node.kind, id: node.blob });
            const bytes = encodeTree(entries);
            top.dir.id = sha256Hex(bytes);
            emit(top.dir.id, bytes);
        }
        return this.root.id;
    }
}
export async function importGit(o) {
    const bin = gitBinary();
    const client = new CairnClient(o.server);
    const ref = o.ref ?? 'HEAD';
    // The source first: a wrong path or ref is the user's mistake, said before any request.
    try {
        gitRun(bin, o.source, ['rev-parse', '--git-dir']);
    }
    catch {
        throw new GitUnavailable(`${o.source} is not a git repository (git rev-parse --git-dir failed there)`);
    }
    let tip;
    try {
        tip = gitRun(bin, o.source, ['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]).toString('latin1').trim();
    }
    catch {
        throw new GitUnavailable(`${ref} names no commit in ${o.source} (try --ref refs/heads/main, or git -C ${o.source} branch -a)`);
    }
    // The first-parent history, with each merge's other parents: their side histories are imported too.
    const commits = [];
    const sideParents = new Map();
    for (const row of gitRun(bin, o.source, ['rev-list', '--first-parent', '--reverse', '--parents', tip]).toString('latin1').split('\n')) {
        if (!row)
            continue;
        const [id, , ...others] = row.split(' ');
        if (others.length && !o.firstParentOnly)
            sideParents.set(commits.length, others);
        commits.push(id);
    }
    await client.requireRepository(o.repo);
    // Where the line stands: empty, or at a snapshot imported from a commit of this history. The
    // governed `main` moves only through lands once it has a head, so an import onto it writes
    // its batches onto a staging line (`git-import/main`) and sets `main` once, from empty, at the
    // end; the staging line is then archived.
    const governed = o.line === GOVERNED_LINE;
    const staging = governed ? `${STAGING_PREFIX}${o.line}` : o.line;
    const position = async (name) => {
        const line = await client.lineOrNull(o.repo, name);
        if (line?.status === 'archived')
            return { head: null, at: -1 };
        const head = line?.head_snapshot_id ?? null;
        if (!head)
            return { head: null, at: -1 };
        const git = await client.jsonOrNull('GET', client.repoPath(o.repo, `/git/snapshots/${head}`));
        const at = git ? commits.indexOf(git.git_commit.commit_id) : -1;
        if (at < 0) {
            throw new ImportRefused(git
                ? `line ${name} is at ${head.slice(0, 12)}, imported from git commit ${git.git_commit.commit_id.slice(0, 12)}, which is not on the first-parent history of ${ref}: nothing imported (import onto a new line with --line)`
                : `line ${name} is at ${head.slice(0, 12)}, which was not imported from git: nothing imported (import onto a new or empty line with --line)`);
        }
        return { head, at };
    };
    const target = await position(o.line);
    let head = target.head;
    let start = target.at + 1;
    if (governed && head && start < commits.length) {
        throw new ImportRefused(`line ${o.line} is governed: it holds ${start} commits of ${ref} and moves only through lands now. Import the newer commits onto another line (--line NAME) and land that, or import into a repository whose ${o.line} is empty`);
    }
    if (governed && !head) {
        const staged = await position(staging);
        head = staged.head;
        start = staged.at + 1;
    }
    if (o.incremental && start === 0)
        throw new ImportRefused(`line ${o.line} holds no import yet: run without --incremental to import the whole history`);
    const already = start;
    const result = { line: o.line, ref, head_commit_id: tip, head_snapshot_id: target.head, commits: commits.length, imported: 0, already, side_imported: 0, batches: 0, uploaded_packs: 0, uploaded_bytes: 0, submodules: [] };
    const finishGoverned = async () => {
        if (!governed || target.head || !head)
            return;
        // main from empty to the imported head: the bootstrap the governed-line rule allows.
        await client.json('PUT', client.repoPath(o.repo, `/lines/${encodeURIComponent(o.line)}`), { head_snapshot_id: head, expected_head_snapshot_id: null });
        result.head_snapshot_id = head;
        await archiveStaging();
    };
    const archiveStaging = async () => {
        const line = await client.lineOrNull(o.repo, staging);
        if (line && line.status !== 'archived')
            await client.json('POST', client.repoPath(o.repo, `/lines/${encodeURIComponent(staging)}:close`), { status: 'archived' });
    };
    if (start >= commits.length) {
        if (governed) {
            if (target.head)
                await archiveStaging();
            else
                await finishGoverned();
        }
        return result;
    }
    const tree = new WorkingTree();
    /** Every submodule entry this run met, at its last commit id: reported at the end. */
    const met = new Map();
    /** git blob id → cairn blob id: a blob met again (a revert, a copy) is not read twice. */
    const blobOf = new Map();
    /** What the server holds or this run packed. */
    const knownBlobs = new Set();
    const knownTrees = new Set();
    const objects = new ObjectReader(bin, o.source);
    const pipeline = new PackPipeline(client, o.repo, 3, NO_PROGRESS);
    let packsCommitted = 0;
    const batchCommits = o.batchCommits ?? (Number(process.env.CAIRN_IMPORT_BATCH_COMMITS) || IMPORT_BATCH_COMMITS);
    let pending = { lineHead: null, sides: 0, snapshots: [], gitCommits: [], trees: [], objects: 0 };
    /** Read the blobs of `gitIds` not met yet (asked for together), hash and pack the new ones. */
    const learnBlobs = async (gitIds) => {
        const wanted = [...new Set([...gitIds].filter((id) => !blobOf.has(id)))];
        for await (const { id: gitId, type, data } of objects.readEach(wanted)) {
            if (type !== 'blob')
                throw new GitUnavailable(`git object ${gitId} is a ${type}, not a blob`);
            const id = blobId(data);
            blobOf.set(gitId, id);
            if (!knownBlobs.has(id)) {
                knownBlobs.add(id);
                await pipeline.add(id, data);
                pending.objects++;
            }
        }
    };
    const cairnBlob = async (gitId) => {
        if (!blobOf.has(gitId))
            await learnBlobs([gitId]);
        return blobOf.get(gitId);
    };
    const place = async (commit, pathBytes, mode, gitId) => {
        const path = pathText(pathBytes, commit);
        const kind = gitModeKind(mode);
        if (kind === 'gitlink') {
            tree.gitlinks.set(path, gitId);
            met.set(path, gitId);
            return;
        }
        if (kind === 'directory')
            throw new GitUnavailable(`git listed the directory ${path} as a change`);
        // The server's rule (lib/domain/tree-depth.ts), said before anything of the batch is sent.
        try {
            requirePathDepth(path, `commit ${commit}`);
        }
        catch (err) {
            throw new UnstorablePath(err.message);
        }
        for (const name of path.split('/')) {
            const rule = refusedEntryName(name, false);
            if (rule)
                throw new UnstorablePath(`commit ${commit} has the path ${path}, which a checkout must not write (${rule})`);
        }
        if (refusedEntryName(path.split('/')[0], true))
            throw new UnstorablePath(`commit ${commit} has the path ${path} at the top of its tree, where cairn keeps its working-copy metadata`);
        tree.set(path, { kind, gitId, blob: await cairnBlob(gitId) });
    };
    const flushBatch = async () => {
        if (!pending.snapshots.length)
            return;
        await pipeline.flush(PACK_KIND_OBJECT, undefined, true);
        for (let i = 0; i < pending.trees.length; i += 50_000)
            await pipeline.flush(PACK_KIND_TREE, pending.trees.slice(i, i + 50_000));
        await pipeline.finish();
        const packs = pipeline.packs.slice(packsCommitted);
        const last = pending.lineHead;
        const body = {
            commit: {
                contract: COMMIT_CONTRACT,
                object_packs: packs.filter((p) => p.kind === PACK_KIND_OBJECT).map(packRow),
                tree_packs: packs.filter((p) => p.kind === PACK_KIND_TREE).map(packRow),
                blob_locators: packs.filter((p) => p.kind === PACK_KIND_OBJECT).flatMap((p) => p.entries.map((e) => ({ blob_id: e.id, ...locatorFields(p.packId, e) }))),
                tree_locators: packs.filter((p) => p.kind === PACK_KIND_TREE).flatMap((p) => p.entries.map((e) => ({ tree_id: e.id, ...locatorFields(p.packId, e) }))),
                snapshots: pending.snapshots,
                // A batch of side commits only moves no line (their snapshots are on none).
                ...(last ? { line_update: { line_name: staging, head_snapshot_id: last, expected_head_snapshot_id: head } } : {}),
            },
            git_commits: pending.gitCommits,
        };
        try {
            await client.json('POST', client.repoPath(o.repo, '/git/imports'), body);
        }
        catch (err) {
            if (err instanceof ServerError && err.status === 409) {
                const now = await client.lineOrNull(o.repo, staging).catch(() => null);
                if ((now?.head_snapshot_id ?? null) !== head)
                    throw new ImportRefused(`line ${staging} moved while importing (now at ${now?.head_snapshot_id?.slice(0, 12) ?? 'nothing'}): run the import again to continue from there`);
            }
            throw err;
        }
        packsCommitted = pipeline.packs.length;
        if (last) {
            head = last;
            if (!governed)
                result.head_snapshot_id = last;
        }
        result.imported += pending.snapshots.length - pending.sides;
        result.side_imported += pending.sides;
        result.batches++;
        pending = { lineHead: null, sides: 0, snapshots: [], gitCommits: [], trees: [], objects: 0 };
        if (o.stopAfterBatches !== undefined && result.batches >= o.stopAfterBatches)
            throw new Error('stopped after a batch (test hook)');
    };
    o.progress.start('import', commits.length - start);
    try {
        // Resuming: the tree of the last imported commit, and what the server holds of it.
        if (start > 0) {
            const listing = await listSnapshot(client, o.repo, head);
            for (const f of listing.files)
                knownBlobs.add(f.blob_id);
            for (const d of listing.directories)
                knownTrees.add(d.tree_id);
            knownTrees.add(listing.snapshot.root_tree_id);
            const entries = [];
            for await (const e of treeEntries(bin, o.source, commits[start - 1]))
                entries.push(e);
            await learnBlobs(entries.filter((e) => e.mode !== '160000').map((e) => e.id));
            for (const e of entries)
                await place(commits[start - 1], e.path, e.mode, e.id);
            tree.rootId((id) => knownTrees.add(id));
        }
        // The commits in the order they are imported: before each merge, the commits it brought in
        // (`rev-list --topo-order --reverse <other parents> --not <first parent>`, parents first).
        // Each is diffed against the commit imported just before it (the tree in memory), whatever
        // their relation, so a commit costs what differs from the last one.
        /** commit → its snapshot, for the commits this run imported (a side commit's parent is found here). */
        const snapOf = new Map();
        /** snapshot → commit this run gave it: a side commit whose snapshot is another's is not recorded. */
        const commitOfSnap = new Map();
        /** Commits of the line before this run, and side commits stored by an earlier run: their snapshots, by the git map. */
        const stored = new Map();
        const lookup = async (commit) => {
            if (!stored.has(commit)) {
                const r = await client.jsonOrNull('GET', client.repoPath(o.repo, `/git/commits/${commit}`));
                stored.set(commit, r?.git_commit?.commit_id === commit ? r.git_commit.snapshot_id : null);
            }
            return stored.get(commit);
        };
        const steps = [];
        /** Side commits left out: a path cairn cannot store, in them or in their first parent. */
        const dropped = new Set();
        /** Commits that will have a snapshot once the steps before are imported. */
        const planned = new Set(commits.slice(start));
        const order = async function* () {
            let base = start > 0 ? commits[start - 1] : null;
            for (let i = start; i < commits.length; i++) {
                const others = sideParents.get(i);
                if (others) {
                    const rows = gitRun(bin, o.source, ['rev-list', '--topo-order', '--reverse', '--parents', ...others, '--not', commits[i - 1]]).toString('latin1').split('\n');
                    for (const row of rows) {
                        if (!row)
                            continue;
                        const [commit, firstParent = null] = row.split(' ');
                        // Resuming: an earlier run may have stored part of this merge's side history.
                        if (i === start && start > 0 && (await lookup(commit)))
                            continue;
                        // A side commit whose first parent has no snapshot (an import that left out an
                        // older merge's side history) is not imported: that merge's export stays rewritten.
                        if (firstParent !== null && !planned.has(firstParent) && !(await lookup(firstParent)))
                            continue;
                        planned.add(commit);
                        steps.push({ commit, side: true, firstParent });
                        yield [commit, base];
                        base = commit;
                    }
                }
                steps.push({ commit: commits[i], side: false, firstParent: i > 0 ? commits[i - 1] : null });
                yield [commits[i], base];
                base = commits[i];
            }
        };
        let index = start;
        for await (const { commit, changes } of treeChanges(bin, o.source, order())) {
            const step = steps.shift();
            if (!step || commit !== step.commit)
                throw new GitUnavailable(`git diff-tree answered for ${commit}, expected ${step?.commit ?? 'nothing'}`);
            try {
                // Deletions first: a file replaced by a directory of the same name (or the reverse) is then a plain add.
                for (const c of changes) {
                    if (/^0+$/.test(c.oldMode))
                        continue;
                    const path = pathText(c.path, commit);
                    if (gitModeKind(c.oldMode) === 'gitlink')
                        tree.gitlinks.delete(path);
                    else
                        tree.remove(path);
                }
                await learnBlobs(changes.filter((c) => !/^0+$/.test(c.newMode) && c.newMode !== '160000').map((c) => c.newId));
                for (const c of changes) {
                    if (/^0+$/.test(c.newMode))
                        continue;
                    try {
                        await place(commit, c.path, c.newMode, c.newId);
                    }
                    catch (err) {
                        // A side commit with a path cairn cannot store is left out (with what builds on it),
                        // not the import: its merge's export stays rewritten. The rest of its tree is kept,
                        // as the next commit is diffed against it.
                        if (!(step.side && err instanceof UnstorablePath))
                            throw err;
                        dropped.add(commit);
                    }
                }
            }
            catch (err) {
                // The commits before this one are imported; the line stops at the last of them.
                if (err instanceof UnstorablePath) {
                    await flushBatch();
                    err.message += `; ${staging} holds the ${index} commits before it${governed ? ` (${o.line} is set once the whole history is imported)` : ''}`;
                }
                throw err;
            }
            const { data: raw } = await objects.read(commit);
            const parsed = parseCommit(raw);
            const rootTreeId = tree.rootId((id, bytes) => {
                if (knownTrees.has(id))
                    return;
                knownTrees.add(id);
                pending.trees.push({ id, raw: bytes });
                pending.objects++;
            });
            if (step.side && step.firstParent !== null && dropped.has(step.firstParent))
                dropped.add(commit);
            if (dropped.has(commit)) {
                if (pending.snapshots.length >= batchCommits || pending.objects >= IMPORT_BATCH_OBJECTS)
                    await flushBatch();
                continue;
            }
            const parentSnapshot = step.side
                ? (step.firstParent === null ? null : snapOf.get(step.firstParent) ?? (await lookup(step.firstParent)))
                : (pending.lineHead ?? head);
            if (step.side && step.firstParent !== null && !parentSnapshot)
                throw new GitUnavailable(`side commit ${commit}: its first parent ${step.firstParent} has no snapshot`);
            const snapshot = {
                root_tree_id: rootTreeId,
                parent_snapshot_ids: parentSnapshot ? [parentSnapshot] : [],
                created_at_s: Math.max(0, parsed.committer.time),
                message: snapshotMessage(parsed, MAX_MESSAGE_BYTES),
            };
            const id = snapshotId(snapshot);
            snapOf.set(commit, id);
            const twin = commitOfSnap.get(id);
            if (step.side && twin !== undefined && twin !== commit) {
                // Another commit of this run has exactly this snapshot (same tree, parent, time and
                // message): one snapshot has one git commit, so this one is left out of the map.
            }
            else {
                commitOfSnap.set(id, commit);
                pending.snapshots.push({ snapshot_id: id, ...snapshot });
                const gitlinks = [...tree.gitlinks].map(([path, commitId]) => ({ path, commit_id: commitId }));
                pending.gitCommits.push({ snapshot_id: id, commit_id: commit, raw: raw.toString('base64'), gitlinks });
                if (step.side)
                    pending.sides++;
            }
            if (!step.side) {
                pending.lineHead = id;
                index++;
                o.progress.increment(1);
            }
            if (pending.snapshots.length >= batchCommits || pending.objects >= IMPORT_BATCH_OBJECTS)
                await flushBatch();
        }
        if (index !== commits.length)
            throw new GitUnavailable(`git diff-tree answered for ${index - start} of ${commits.length - start} commits`);
        await flushBatch();
        await finishGoverned();
    }
    finally {
        o.progress.stop();
        objects.close();
        await pipeline.settle();
        await pipeline.close();
    }
    result.uploaded_packs = pipeline.uploadedPacks;
    result.uploaded_bytes = pipeline.uploadedBytes;
    result.submodules = [...met].map(([path, commitId]) => ({ path, commit_id: commitId }));
    return result;
}
//# sourceMappingURL=git-import.js.map