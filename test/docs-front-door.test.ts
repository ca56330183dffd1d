// docs/operations.md "A front door", run as written: its steps in order with bash in a scratch
// directory, `cairn` on PATH. Only the values a reader sets are changed: CAIRN_ETC points into
// the scratch directory (step 1 must create it), CAIRN_SITE is http://127.0.0.1 on a free port,
// and cairn's 127.0.0.1:8088 another free port. The Caddyfile block is saved where step 2
// says; the two foreground steps (cairn, Caddy) run as background processes, each started
// from its block's text. Then the check step must pass and print what it says it prints, and
// the origin the recipe allows must be the site's own: the same write from another origin is
// refused.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, PROJECT_ROOT, tempDir, until, freePort } from './helpers.js';

const OPERATIONS = readFileSync(path.join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
const CADDY = ['/usr/bin/caddy', '/usr/local/bin/caddy'].find((p) => existsSync(p));
const hasCurl = spawnSync('curl', ['--version']).status === 0;

interface Block { lang: string; text: string }

/** The fenced blocks of "### A front door", dedented (they sit inside a numbered list). */
export function frontDoorBlocks(markdown: string): Block[] {
  const start = markdown.indexOf('\n### A front door\n');
  if (start < 0) throw new Error('docs/operations.md has no "### A front door" section');
  const rest = markdown.slice(start + 1);
  const next = rest.search(/\n#{2,3} /);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/^( *)```(\w+)\n([\s\S]*?)^\1```$/gm)].map((m) => ({
    lang: m[2],
    text: m[3].split('\n').map((line) => line.slice(Math.min(m[1].length, line.length - line.trimStart().length))).join('\n'),
  }));
}


(CADDY || process.env.CI ? describe : describe.skip)('docs/operations.md "A front door", run as written', function () {
  this.timeout(180_000);
  let root: string;
  let env: NodeJS.ProcessEnv;
  const running: { name: string; proc: ChildProcess; out: () => string }[] = [];

  before(function () {
    // In CI (.ci/run installs Debian's caddy) the recipe is always run.
    if (!CADDY) throw new Error('caddy is not installed (apt-get install caddy; .ci/run installs it)');
    if (!hasCurl) {
      console.log('      SKIPPED: the front-door recipe needs curl');
      this.skip();
    }
    root = tempDir('cairn-door-');
    const bin = path.join(root, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'cairn'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(path.join(bin, 'cairn'), 0o755);
    env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
  });

  after(async () => {
    for (const { proc } of running.reverse()) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      const gone = new Promise((r) => proc.once('exit', r));
      try { process.kill(-proc.pid!, 'SIGTERM'); } catch { continue; } // the block's shell and what it started
      await gone;
    }
  });

  it('runs every step in order: the files, the Caddyfile, cairn and Caddy in the foreground, the check', async () => {
    const blocks = frontDoorBlocks(OPERATIONS);
    expect(blocks.map((b) => b.lang), 'the steps').to.deep.equal(['sh', 'caddyfile', 'sh', 'sh', 'sh']);
    const etc = path.join(root, 'etc', 'cairn');
    const [sitePort, cairnPort] = [await freePort(), await freePort()];
    const site = `http://127.0.0.1:${sitePort}`;
    const localize = (text: string) => {
      // Every step starts with the two settings a reader writes for the deployment.
      expect(text.split('\n')[0]).to.equal('export CAIRN_ETC=/etc/cairn CAIRN_SITE=https://cairn.example.com');
      return text
        .replace('export CAIRN_ETC=/etc/cairn CAIRN_SITE=https://cairn.example.com', `export CAIRN_ETC=${etc} CAIRN_SITE=${site}`)
        .replaceAll('127.0.0.1:8088', `127.0.0.1:${cairnPort}`);
    };
    const [files, caddyfile, serve, door, check] = blocks.map((b) => b.text);

    // 1. The files (CAIRN_ETC does not exist yet: the step creates it).
    const one = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', localize(files)], { cwd: root, env, encoding: 'utf8' });
    expect(one.status, `step 1:\n${one.stdout}${one.stderr}`).to.equal(0);
    expect(readFileSync(path.join(etc, 'users'), 'utf8')).to.match(/^alice \$2a\$/);
    // 2. The Caddyfile, saved where the step says.
    expect(caddyfile).to.include('{$CAIRN_SITE} {');
    writeFileSync(path.join(etc, 'Caddyfile'), caddyfile);
    // 3. and 4. cairn and Caddy, each from its block, in the background.
    const start = (name: string, text: string) => {
      let out = '';
      const proc = spawn('bash', ['-e', '-o', 'pipefail', '-c', localize(text)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      proc.stdout!.on('data', (d) => { out += d; });
      proc.stderr!.on('data', (d) => { out += d; });
      running.push({ name, proc, out: () => out });
      return { proc, out: () => out };
    };
    const cairn = start('cairn', serve);
    await until('cairn behind the door', async () => {
      if (cairn.proc.exitCode !== null) throw new Error(`step 3 exited:\n${cairn.out()}`);
      try { return (await fetch(`http://127.0.0.1:${cairnPort}/healthz`)).ok; } catch { return false; }
    }, 30_000);
    const caddy = start('caddy', door);
    await until('Caddy in front', async () => {
      if (caddy.proc.exitCode !== null) throw new Error(`step 4 exited:\n${caddy.out()}`);
      try { return (await fetch(`${site}/healthz`)).status === 401; } catch { return false; }
    }, 30_000);

    // 5. The check passes and prints what it says.
    const five = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', localize(check)], { cwd: root, env, encoding: 'utf8' });
    expect(five.status, `step 5:\n${five.stdout}${five.stderr}\n--- cairn:\n${cairn.out()}\n--- caddy:\n${caddy.out()}`).to.equal(0);
    expect(five.stdout.split('\n')[0]).to.equal('401');
    expect(JSON.parse(five.stdout.split('\n').slice(1).join('\n')).repository.repository_name).to.equal('hello');

    // The allowed origin is the site's: a page of any other origin may not write.
    const basic = `Basic ${Buffer.from('alice:alice-password').toString('base64')}`;
    const write = (origin: string) => fetch(`${site}/v1/native/repository-authorities`, {
      method: 'POST',
      headers: { authorization: basic, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ repository_name: `from-${origin.length}`, namespace: '', policy_flags: 0 }),
    });
    const foreign = await write('https://cairn.example.com');
    expect(foreign.status).to.equal(403);
    expect((await foreign.json() as { error: string }).error).to.match(/--allowed-origin/);
    expect((await write(site)).status).to.be.oneOf([200, 201]);
  });
});
