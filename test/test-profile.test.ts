// `npm run test:quick` (.mocharc.quick.json) is the edit–test loop's profile: every file it names
// exists, and none of them needs what makes the whole suite slow (a browser, Swift, crash loops).
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the quick test profile', () => {
  it('names existing test files, none needing chromium or Swift, and npm test still runs every file', () => {
    const quick = JSON.parse(readFileSync(path.join(root, '.mocharc.quick.json'), 'utf8')) as { spec: string[] };
    expect(quick.spec.length).to.be.greaterThan(10);
    for (const spec of quick.spec) {
      const source = path.join(root, spec.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
      expect(existsSync(source), spec).to.equal(true);
      expect(readFileSync(source, 'utf8'), spec).to.not.match(/from '\.\/(ui-browser|swift)\.js'/);
    }
    // The whole suite's config lists every compiled test file once (the longest first).
    const whole = createRequire(import.meta.url)(path.join(root, '.mocharc.cjs')) as { spec: string[]; parallel: boolean };
    const compiled = readdirSync(path.join(root, 'dist/test')).filter((f) => f.endsWith('.test.js')).map((f) => `dist/test/${f}`).sort();
    expect([...whole.spec].sort()).to.deep.equal(compiled);
    expect(new Set(whole.spec).size).to.equal(whole.spec.length);
    expect(whole.spec[0]).to.equal('dist/test/ui.test.js');
    expect(whole.parallel).to.equal(true);
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test:quick']).to.match(/--config \.mocharc\.quick\.json/);
    expect(pkg.scripts.test).to.not.match(/quick/);
  });
});
