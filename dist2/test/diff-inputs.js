// Inputs for the line-diff tests (test/line-diff.test.ts, test/diffs.test.ts): large texts with
// many changes, made deterministically, and git's own counts of a pair of texts.
import { spawnSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { tempDir } from './helpers.js';
/** git's numstat of two texts (no config of the machine's: its default algorithm). */
export async function numstat(before, after) {
    const dir = tempDir('cairn-numstat-');
    await fsp.writeFile(path.join(dir, 'a'), before);
    await fsp.writeFile(path.join(dir, 'b'), after);
    const r = spawnSync('git', ['diff', '--no-index', '--numstat', 'a', 'b'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' }, maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0 && r.status !== 1)
        throw new Error(`git diff: ${r.stderr}`);
    const m = /^(\d+)\t(\d+)\t/.exec(r.stdout);
    return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}
/** A small deterministic generator (mulberry32), so a failure is reproducible. */
export function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
/** A 10,000-line source file, and the same with about 2,900 lines changed, added or removed in scattered places. */
export function bigEdit(seed) {
    const r = rng(seed);
    const base = Array.from({ length: 10_000 }, (_, i) => (i % 50 === 0 ? '' : i % 7 === 0 ? '  }' : `  const v${i} = compute(${i}, "${Math.floor(r() * 1e9).toString(36)}");`));
    const out = [];
    for (let i = 0; i < base.length; i++) {
        const x = r();
        if (x < 0.17)
            out.push(`  const v${i} = changed(${i}, ${Math.floor(r() * 1000)});`);
        else if (x < 0.2)
            continue;
        else
            out.push(base[i]);
        if (r() < 0.03)
            out.push(`  inserted(${i});`);
    }
    return [`${base.join('\n')}\n`, `${out.join('\n')}\n`];
}
/** A package-lock.json-like file: many blocks of near-identical lines. */
function lockfile(names, version, r) {
    const out = ['{', '  "name": "app",', '  "lockfileVersion": 3,', '  "requires": true,', '  "packages": {'];
    for (const n of names) {
        const v = version(n);
        out.push(`    "node_modules/${n}": {`, `      "version": "${v}",`, `      "resolved": "https://registry.npmjs.org/${n}/-/${n}-${v}.tgz",`, `      "integrity": "sha512-${Buffer.from(`${n}@${v}`).toString('base64').padEnd(40, 'A')}",`, '      "dev": true,');
        if (r() < 0.4)
            out.push('      "dependencies": {', `        "${names[Math.floor(r() * names.length)]}": "^1.0.0"`, '      }');
        else
            out.push('      "license": "MIT"');
        out.push('    },');
    }
    out.push('  }', '}');
    return `${out.join('\n')}\n`;
}
/** A lockfile of about 257 KB, and the same with packages added, removed and bumped (about +3,000 / −400 lines). */
export function lockfileEdit() {
    const r = rng(7);
    const names = Array.from({ length: 920 }, (_, i) => `pkg-${i.toString(36)}-${Math.floor(r() * 1e6).toString(36)}`);
    const before = lockfile(names, () => '1.0.0', rng(1));
    const added = Array.from({ length: 330 }, (_, i) => `new-${i}`);
    const kept = names.filter((_, i) => i % 29 !== 0);
    const after = lockfile([...kept, ...added].sort(), (n) => (n.endsWith('7') ? '1.1.0' : '1.0.0'), rng(1));
    return [before, after];
}
//# sourceMappingURL=diff-inputs.js.map