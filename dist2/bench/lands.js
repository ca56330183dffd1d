// Land figures for `npm run bench`: lands per second for ff-only and for merge on a
// 5,000-file tree (100 directories × 50 files) where the two sides touch different files. In
// process, through the authority's LandDesk built with a passing gate function (the gates are
// the evidence seam; the evidence is not what is measured here), every land a real durable commit.
//  - ff-only: a chain S0 → S1 → … (each one file changed); patchset i is S(i-1) → S(i), landed
//    in order;
//  - merge: patchsets all based on S0, each changing a file in its own directory; the line
//    starts at S0 plus a change in another directory, so every land is a real three-way merge
//    (a new two-parent snapshot, server-built packs of the new trees).
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Authority } from '../lib/authority/authority.js';
import { LandDesk } from '../lib/authority/workflow/lands.js';
import { blobId, decodeTree, encodeSnapshot, encodeTree, sha256Hex } from '../lib/domain/content.js';
import { sizeFromEntries } from '../lib/domain/tree-size.js';
import { buildPack, PACK_KIND_OBJECT, PACK_KIND_TREE } from '../lib/store/pack.js';
const DIRS = 100;
const FILES = 50;
/** `sizes`: each tree's expanded size, recorded as a commit records it (storage-layout.md §8). */
function stage(tx, kind, objects, sizes) {
    const fresh = objects.filter((o) => !tx.has(kind, o.id));
    if (!fresh.length)
        return;
    const packKind = kind === 'blob' ? PACK_KIND_OBJECT : PACK_KIND_TREE;
    const pack = buildPack(packKind, fresh);
    tx.writePack(packKind, pack.packId, pack.bytes);
    for (const e of pack.entries)
        tx.addLocator({ kind, id: e.id, pack_id: pack.packId, offset: e.offset, length: e.length, raw_length: e.raw_length, crc32: e.crc32, expanded: sizes?.get(e.id) });
}
/** A snapshot equal to `parent` with file `f<file>` of directory `d<dir>` set to `content` (or the full tree when parent is null). */
async function variant(store, parent, edits, line) {
    const blobs = [];
    const trees = [];
    const blob = (s) => {
        const raw = Buffer.from(s);
        const id = blobId(raw);
        blobs.push({ id, raw });
        return id;
    };
    const tree = (entries) => {
        const raw = encodeTree(entries);
        const id = sha256Hex(raw);
        trees.push({ id, raw });
        return id;
    };
    let root;
    if (parent === null) {
        root = [];
        for (let d = 0; d < DIRS; d++) {
            const files = [];
            for (let f = 0; f < FILES; f++)
                files.push({ name: `f${f}.txt`, kind: 'file', id: blob(`dir ${d} file ${f}\n`.repeat(20)) });
            root.push({ name: `d${d}`, kind: 'directory', id: tree(files) });
        }
    }
    else {
        root = [...(await store.readTree(store.snapshot(parent).root_tree_id))];
        for (const e of edits) {
            const i = root.findIndex((x) => x.name === `d${e.dir}`);
            const files = [...(await store.readTree(root[i].id))];
            const j = files.findIndex((x) => x.name === `f${e.file}.txt`);
            files[j] = { ...files[j], id: blob(e.content) };
            root[i] = { ...root[i], id: tree(files) };
        }
    }
    const rootId = tree(root);
    const snap = encodeSnapshot({ root_tree_id: rootId, parent_snapshot_ids: parent ? [parent] : [], created_at_s: Math.floor(Date.now() / 1000), message: null });
    const id = sha256Hex(snap);
    // Children before parents (as built above); a stored child's size is recorded.
    const sizes = new Map();
    for (const t of trees)
        sizes.set(t.id, sizeFromEntries(decodeTree(t.raw), (c) => sizes.get(c) ?? store.knownSize(c)));
    await store.transact((tx) => {
        stage(tx, 'blob', blobs);
        stage(tx, 'tree', trees, sizes);
        if (!tx.hasSnapshot(id))
            tx.addSnapshot(snap);
        if (line)
            tx.setLine({ name: line, status: 'active', head_snapshot_id: id, updated_at_s: Math.floor(Date.now() / 1000) });
    });
    return id;
}
async function patchsets(a, line, pairs) {
    const out = [];
    for (const [base, rev] of pairs) {
        const t = await a.workflow.createTask({ title: 'bench', intent: 'bench' });
        const c = await a.workflow.createChange({ task_id: t.task_id, title: 'bench', base_line: line });
        await a.workflow.createPatchset(c.change_id, { base_snapshot_id: base, revision_snapshot_id: rev, summary: 's', author_mode: 'human_only' });
        out.push(c.change_id);
    }
    return out;
}
export async function stepLands(ctx) {
    const root = path.join(ctx.root, 'lands-bench');
    await fsp.rm(root, { recursive: true, force: true });
    await Authority.create(root, 0, Math.floor(Date.now() / 1000));
    const a = await Authority.open(root, 0, pino({ level: 'silent' }));
    try {
        const desk = new LandDesk(a.store, a.workflow, () => ({ refusal: null, policy_decision_id: null }));
        const n = Math.max(10, Math.round(100 * ctx.scale));
        ctx.log(`lands: 5,000-file tree, ${n} ff-only and ${n} merge lands`);
        const s0 = await variant(a.store, null, [], 'ff');
        // ff-only chain
        const chain = [s0];
        for (let i = 1; i <= n; i++)
            chain.push(await variant(a.store, chain[i - 1], [{ dir: i % DIRS, file: i % FILES, content: `ff ${i}\n` }]));
        const ffChanges = await patchsets(a, 'ff', chain.slice(1).map((s, i) => [chain[i], s]));
        let t = performance.now();
        for (const c of ffChanges) {
            const { land } = await desk.submit(c, { mode: 'ff-only' });
            if (land.status !== 'landed')
                throw new Error(`ff-only land refused: ${land.failure_kind} ${land.failure_message}`);
        }
        const ffMs = performance.now() - t;
        // merge: the line moved off s0 in directory 0; each patchset changes its own directory
        await variant(a.store, s0, [{ dir: 0, file: 0, content: 'line moved\n' }], 'mg');
        const revs = [];
        for (let i = 0; i < n; i++)
            revs.push(await variant(a.store, s0, [{ dir: 1 + (i % (DIRS - 1)), file: Math.floor(i / (DIRS - 1)) % FILES, content: `merge ${i}\n` }]));
        const mgChanges = await patchsets(a, 'mg', revs.map((r) => [s0, r]));
        t = performance.now();
        for (const c of mgChanges) {
            const { land } = await desk.submit(c, { mode: 'merge' });
            if (land.status !== 'landed')
                throw new Error(`merge land refused: ${land.failure_kind} ${land.failure_message}`);
        }
        const mgMs = performance.now() - t;
        return {
            files: DIRS * FILES,
            lands: n,
            ff_only_lands_s: Math.round((n / ffMs) * 1000 * 10) / 10,
            merge_lands_s: Math.round((n / mgMs) * 1000 * 10) / 10,
            ff_only_ms_per_land: Math.round((ffMs / n) * 10) / 10,
            merge_ms_per_land: Math.round((mgMs / n) * 10) / 10,
            cpus: os.cpus().length,
        };
    }
    finally {
        await a.store.settle(); // a background segment merge may still be writing into index/
        a.store.close();
        await fsp.rm(root, { recursive: true, force: true });
    }
}
export function landRows(f) {
    if (!f)
        return [];
    return [
        [`ff-only lands, ${f.files}-file tree (${f.lands} lands, sequential)`, `${f.ff_only_lands_s} lands/s (${f.ff_only_ms_per_land} ms each)`],
        [`merge lands, ${f.files}-file tree, sides touching different files`, `${f.merge_lands_s} lands/s (${f.merge_ms_per_land} ms each)`],
    ];
}
//# sourceMappingURL=lands.js.map