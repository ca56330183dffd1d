// docs/operations.md "Team setup", run as written: its shell blocks, in order, with bash in a
// temporary directory, `cairn` on PATH, the server on a free port (the blocks' 127.0.0.1:8088
// replaced), alice's blocks with one home directory and the ones marked "on bob's machine" with
// another (each its own ~/.gitconfig, so `git config --global credential.helper store` and
// `cairn login` change nothing outside). Then what the walkthrough promises is checked: bob's
// git push made a change, the stored sign-ins are mode 0600, no token reached the server's log,
// and bob's revoked token no longer lets git in.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, PROJECT_ROOT, api, tempDir, until, freePort } from './helpers.js';
import { hasGit } from './git-fixture.js';

const OPERATIONS = readFileSync(path.join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
const hasCurl = spawnSync('curl', ['--version']).status === 0;

/** The section's fenced sh blocks, dedented (they sit inside a numbered list). */
export function teamSetupBlocks(markdown: string): string[] {
  const start = markdown.indexOf('\n## Team setup\n');
  if (start < 0) throw new Error('docs/operations.md has no "## Team setup" section');
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const blocks: string[] = [];
  for (const m of section.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)) {
    const indent = m[1].length;
    blocks.push(m[2].split('\n').map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length))).join('\n'));
  }
  return blocks;
}


function run(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    // 'exit', not 'close': the block's background server may hold inherited descriptors.
    child.on('exit', (code) => resolve({ code, out }));
  });
}

function home(root: string, who: string): NodeJS.ProcessEnv {
  const dir = path.join(root, `${who}-home`);
  mkdirSync(path.join(dir, '.config'), { recursive: true });
  writeFileSync(path.join(dir, '.gitconfig'), '');
  return {
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, '.config'),
    GIT_CONFIG_GLOBAL: path.join(dir, '.gitconfig'),
    GIT_AUTHOR_NAME: who, GIT_AUTHOR_EMAIL: `${who}@example.com`, GIT_COMMITTER_NAME: who, GIT_COMMITTER_EMAIL: `${who}@example.com`,
  };
}

(hasGit && hasCurl ? describe : describe.skip)('docs/operations.md "Team setup", run as written', function () {
  this.timeout(180_000);
  let root: string;
  let port: number;
  let alice: NodeJS.ProcessEnv;
  let bob: NodeJS.ProcessEnv;

  before(async () => {
    root = tempDir('cairn-team-');
    port = await freePort();
    const bin = path.join(root, 'bin');
    mkdirSync(bin);
    writeFileSync(path.join(bin, 'cairn'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    chmodSync(path.join(bin, 'cairn'), 0o755);
    const PATH = `${bin}:${process.env.PATH}`;
    alice = { ...process.env, PATH, ...home(root, 'alice') };
    bob = { ...process.env, PATH, ...home(root, 'bob') };
  });

  after(async () => {
    // Stop the server the blocks started (by its lock's pid file, as the docs say).
    const pidFile = path.join(root, 'data', 'cairn.lock.pid');
    const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
    if (!Number.isInteger(pid) || pid <= 0) return;
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    try { process.kill(pid, 'SIGTERM'); } catch { return; }
    await until('the server to stop', () => !alive(), 20_000).catch(() => { if (alive()) process.kill(pid, 'SIGKILL'); });
  });

  it('runs every block in order, then bob\'s push is a change, sign-ins are 0600, no token is logged and the revoked one no longer works', async () => {
    const blocks = teamSetupBlocks(OPERATIONS);
    expect(blocks.length, 'shell blocks in the section').to.be.at.least(8);
    // `cairn repo rules` is built apart from this section's commands: its block runs once it exists.
    const rules = spawnSync(process.execPath, [CLI, 'repo', 'rules', '--help'], { encoding: 'utf8' });
    const hasRules = rules.status === 0 && rules.stdout.includes('--required-approvals');
    let ran = 0;
    for (const block of blocks) {
      if (block.includes('cairn repo rules') && !hasRules) {
        console.log('note: cairn repo rules does not exist yet; its block of "Team setup" is skipped');
        continue;
      }
      const script = block.replaceAll('127.0.0.1:8088', `127.0.0.1:${port}`);
      const env = /^# on bob's machine/im.test(block.split('\n')[0]) ? bob : alice;
      const res = await run(script, root, env);
      expect(res.code, `block ${ran + 1} failed:\n${script}\n--- output:\n${res.out}`).to.equal(0);
      ran++;
    }
    expect(ran).to.be.at.least(blocks.length - 1);

    const url = `http://127.0.0.1:${port}`;
    const stored = (env: NodeJS.ProcessEnv) => {
      const file = path.join(env.XDG_CONFIG_HOME!, 'cairn', 'credentials.json');
      expect(statSync(file).mode & 0o777, file).to.equal(0o600);
      return JSON.parse(readFileSync(file, 'utf8')).servers[url] as { token: string; account: string };
    };
    const a = stored(alice);
    const b = stored(bob);
    expect(a.account).to.equal('alice');
    expect(b.account).to.equal('bob');
    // bob's git push for review made a change, written as bob.
    const changes = await api(url, 'GET', '/v1/native/repository-authorities/0/changes?limit=10', { headers: { authorization: `Bearer ${a.token}` } });
    expect(changes.status, changes.text).to.equal(200);
    expect(changes.json.changes.map((c: { title: string }) => c.title)).to.include('Say hello');
    // No token text in the server's log.
    const log = readFileSync(path.join(root, 'serve.log'), 'utf8');
    expect(log).to.not.match(/cairn_[A-Za-z0-9_-]{43}/);
    // bob's token is revoked: git is refused (401), with no password in the URL to fall back on.
    const fetch = await run('git ls-remote http://127.0.0.1:PORT/v1/native/repository-authorities/0/git/main.git'.replace('PORT', String(port)), root, { ...bob, GIT_TERMINAL_PROMPT: '0' });
    expect(fetch.code).to.not.equal(0);
    expect(fetch.out).to.match(/401|Authentication failed|could not read Username/i);
    // The audit feed recorded the walkthrough's changes.
    const audit = await api(url, 'GET', '/v1/native/audit?limit=1000', { headers: { authorization: `Bearer ${a.token}` } });
    const types = (audit.json.records as { type: string }[]).map((r) => r.type);
    expect(types).to.include.members(['account.added', 'token.created', 'group.set', 'access.changed', 'token.revoked', 'account.changed']);
  });
});
