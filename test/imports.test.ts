// The import graph of lib/: no cycles (type-only imports included), and layers import only
// downward (architecture: cli → client/http → authority → domain, store; store knows no HTTP).
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './helpers.js';

const LIB = path.join(PROJECT_ROOT, 'lib');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of sources(LIB)) {
    const text = readFileSync(file, 'utf8');
    // Static imports and re-exports, and dynamic `import('./x.js')`: a lazy import is still an
    // edge, so two modules of one layer that load each other on demand are a cycle too.
    const specifiers = [
      ...[...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm)].map((m) => m[1]),
      ...[...text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g)].map((m) => m[1]),
    ];
    g.set(file, [...new Set(specifiers.map((s) => path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts'))))]);
  }
  return g;
}

const layer = (file: string) => path.relative(LIB, file).split(path.sep)[0];
const ALLOWED: Record<string, string[]> = {
  domain: ['domain'],
  store: ['store', 'domain'],
  // The object-store seam of the archive (lib/archive): below the authority, beside the store.
  archive: ['archive', 'store', 'domain'],
  // The writer lease's stores (lib/lease: etcd, or the archive's object store through its seam).
  lease: ['lease', 'archive', 'store', 'domain'],
  authority: ['authority', 'archive', 'lease', 'store', 'domain'],
  http: ['http', 'authority', 'domain'],
  client: ['client', 'domain', 'store'],
  cli: ['cli', 'client', 'http', 'authority', 'archive', 'lease', 'store', 'domain'],
};

describe('import graph of lib/', () => {
  it('sees dynamic imports: a lazy import back into an importer is reported as a cycle', () => {
    const dir = path.join(LIB, 'cli');
    const g = graph();
    const workflow = g.get(path.join(dir, 'workflow-commands.ts'))!;
    expect(workflow).to.include(path.join(dir, 'land-commands.ts'));
    const main = g.get(path.join(dir, 'main.ts'))!;
    expect(main).to.include(path.join(dir, 'serve.ts')); // main.ts loads every command lazily
  });

  it('has no cycles', () => {
    const g = graph();
    const state = new Map<string, 1 | 2>();
    const cycles: string[] = [];
    const visit = (f: string, trail: string[]) => {
      if (state.get(f) === 2) return;
      if (state.get(f) === 1) {
        cycles.push([...trail.slice(trail.indexOf(f)), f].map((x) => path.relative(LIB, x)).join(' → '));
        return;
      }
      state.set(f, 1);
      for (const d of g.get(f) ?? []) visit(d, [...trail, f]);
      state.set(f, 2);
    };
    for (const f of g.keys()) visit(f, []);
    expect(cycles).to.deep.equal([]);
  });

  it('imports only downward, and the HTTP layer never touches the file system', () => {
    const wrong: string[] = [];
    for (const [file, deps] of graph()) {
      // The pack codec is pure (constants, no I/O); HTTP handlers name pack kinds with it.
      for (const d of deps) if (!ALLOWED[layer(file)]?.includes(layer(d)) && !(layer(file) === 'http' && path.relative(LIB, d) === path.join('store', 'pack.ts'))) wrong.push(`${path.relative(LIB, file)} → ${path.relative(LIB, d)}`);
      if (layer(file) === 'http' && /from 'node:fs/.test(readFileSync(file, 'utf8'))) wrong.push(`${path.relative(LIB, file)} imports node:fs`);
    }
    expect(wrong).to.deep.equal([]);
  });
});
