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
    const deps = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm)].map((m) => path.resolve(path.dirname(file), m[1].replace(/\.js$/, '.ts')));
    g.set(file, deps);
  }
  return g;
}

const layer = (file: string) => path.relative(LIB, file).split(path.sep)[0];
const ALLOWED: Record<string, string[]> = {
  domain: ['domain'],
  store: ['store', 'domain'],
  authority: ['authority', 'store', 'domain'],
  http: ['http', 'authority', 'domain'],
  client: ['client', 'domain', 'store'],
  cli: ['cli', 'client', 'http', 'authority', 'store', 'domain'],
};

describe('import graph of lib/', () => {
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
