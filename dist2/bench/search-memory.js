// The memory of the change search's posting lists alone (docs/benchmarks.md "Search"), apart
// from a server's other memory and garbage: lists of title words, base lines and path prefixes
// shaped like bench/search-populate.ts's changes, built in this process, then the V8 heap plus
// array buffers held after a full GC. `flat`: the lists as the server keeps them
// (lib/domain/workflow/search-index.ts), with the section's size and its encode and decode CPU
// time; `arrays`: the same entries (without the third level of prefixes) in maps of ascending
// arrays of numbers, the structure the lists had before.
//
//   node --expose-gc dist/bench/search-memory.js flat|arrays CHANGES
import { SearchIndex } from '../lib/domain/workflow/search-index.js';
import { titleWords } from '../lib/domain/workflow/search-query.js';
const [mode, n] = process.argv.slice(2);
const N = Number(n);
const gc = globalThis.gc;
if (!gc || (mode !== 'flat' && mode !== 'arrays') || !(N > 0)) {
    process.stderr.write('usage: node --expose-gc dist/bench/search-memory.js flat|arrays CHANGES\n');
    process.exit(2);
}
let seed = 0x5eed;
const rnd = (k) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % k;
};
const VERBS = ['fix', 'add', 'speed up', 'refactor', 'document', 'remove', 'test', 'rename'];
const held = () => { gc(); gc(); const m = process.memoryUsage(); return m.heapUsed + m.arrayBuffers; };
const cpuMs = (since) => { const c = process.cpuUsage(since); return Math.round((c.user + c.system) / 1000); };
function addSorted(list, seq) {
    const len = list.length;
    if (len === 0 || list[len - 1] < seq) {
        list.push(seq);
        return;
    }
    let lo = 0;
    let hi = len;
    while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (list[mid] < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (list[lo] !== seq)
        list.splice(lo, 0, seq);
}
const arrays = { words: new Map(), lines: new Map(), prefixes: new Map() };
const add = (m, k, s) => { let l = m.get(k); if (!l)
    m.set(k, (l = [])); addSorted(l, s); };
const before = held();
const c0 = process.cpuUsage();
const index = new SearchIndex();
index.bulk = true;
for (let seq = 1; seq <= N; seq++) {
    const title = `${VERBS[rnd(VERBS.length)]} noun${rnd(400)} in area${rnd(40)} rare${rnd(20_000)}`;
    const files = [];
    for (let i = 1 + rnd(8); i > 0; i--)
        files.push({ path: `dir${rnd(40)}/sub${rnd(10)}/file${rnd(1000)}.ts` });
    if (mode === 'arrays') {
        for (const w of titleWords(title))
            add(arrays.words, w, seq);
        add(arrays.lines, 'main', seq);
        const set = new Set();
        for (const f of files) {
            const p = f.path.split('/');
            set.add(p[0]);
            set.add(`${p[0]}/${p[1]}`);
        }
        for (const x of set)
            add(arrays.prefixes, x, seq);
    }
    else {
        index.applyChange({ sequence: seq, title, base_line: 'main' });
        index.applyPatchset({ change_id: `change-${seq}`, diff: { files } });
    }
}
index.bulk = false;
index.compact();
const buildMs = cpuMs(c0);
const bytes = held() - before;
const fig = { mode, changes: N, build_cpu_ms: buildMs, held_mib: Math.round((bytes / 2 ** 20) * 10) / 10 };
if (mode === 'arrays') {
    let entries = 0;
    for (const m of Object.values(arrays))
        for (const l of m.values())
            entries += l.length;
    fig.entries = entries;
}
else {
    fig.entries = index.size().entries;
    const c1 = process.cpuUsage();
    const section = index.encode(N);
    fig.encode_cpu_ms = cpuMs(c1);
    const c2 = process.cpuUsage();
    SearchIndex.decode(section, N);
    fig.decode_cpu_ms = cpuMs(c2);
    fig.section_mib = Math.round((section.length / 2 ** 20) * 10) / 10;
}
process.stdout.write(JSON.stringify(fig) + '\n');
//# sourceMappingURL=search-memory.js.map