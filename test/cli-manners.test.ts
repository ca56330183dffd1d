// The command line's manners: `cairn help X`, "did you mean" for commands, sub-commands, options
// and option values, bad values refused (exit 2) before anything is sent, the server and
// repository found the same way by every command (working copy, git remote), a mistyped
// `checkout --line` refused, and the bash completion script.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CLI, cli, register, startTestServer, tempDir, type TestServer } from './helpers.js';

function run(args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A loopback port that records whether anything connected: "nothing was sent" made checkable. */
async function listener(): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let n = 0;
  const server = net.createServer((socket) => { n++; socket.destroy(); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, connections: () => n, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('cli manners', () => {
  it('cairn help X prints what cairn X --help prints', async () => {
    const viaHelp = await cli(['help', 'checkout']);
    const viaFlag = await cli(['checkout', '--help']);
    expect(viaHelp.code).to.equal(0);
    expect(viaHelp.stdout).to.equal(viaFlag.stdout).and.match(/^Usage: cairn checkout/);
    const sub = await cli(['help', 'repo', 'access']);
    expect(sub.code).to.equal(0);
    expect(sub.stdout).to.equal((await cli(['repo', 'access', '--help'])).stdout);
  });

  it('a mistyped command, sub-command or option is refused (exit 2) naming the one meant', async () => {
    const cmd = await cli(['chekout']);
    expect(cmd.code).to.equal(2);
    expect(cmd.stderr).to.equal('cairn: "chekout" is not a cairn command (did you mean "checkout"?); see cairn --help\n');
    const far = await cli(['frobnicate']);
    expect(far.code).to.equal(2);
    expect(far.stderr).to.not.include('did you mean');
    const sub = await cli(['task', 'lsit', '--server', 'http://127.0.0.1:9', '--repo', '0']);
    expect(sub.code).to.equal(2);
    expect(sub.stderr).to.include('unknown task subcommand "lsit"').and.include('(did you mean "list"?)');
    for (const [args, meant] of [[['review', 'aprove', '--change', 'change-1'], 'approve'], [['ci', 'rn', 'ps-1'], 'run'], [['archive', 'stauts'], 'status'], [['config', 'sett', 'a', 'b'], 'set']] as const) {
      const r = await cli([...args]);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.stderr, args.join(' ')).to.include(`(did you mean "${meant}"?)`);
    }
    const flag = await cli(['push', '--lien', 'main', '.']);
    expect(flag.code).to.equal(2);
    expect(flag.stderr).to.equal('cairn: unknown option --lien (did you mean --line?) (see --help)\n');
    expect(flag.stderr).to.not.match(/To specify a positional argument/);
    const missing = await cli(['lines', '--repo']);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.equal('cairn: --repo needs a value\n');
  });

  it('bad option values exit 2 before anything is sent (no idempotency key printed)', async () => {
    const port = await listener();
    const plan = path.join(tempDir(), 'plan.md');
    await fsp.writeFile(plan, '# A plan\n');
    try {
      const at = ['--server', port.url, '--repo', '0'];
      const cases: [string[], RegExp][] = [
        [['land', ...at, '--mode', 'fast-forward', 'change-1'], /--mode must be one of ff-only, merge, direct, not "fast-forward"/],
        [['task', 'close', ...at, '--status', 'done', 'task-1'], /--status must be one of completed, abandoned, canceled, cancelled/],
        [['change', 'list', ...at, '--status', 'lande'], /--status must be one of draft, .*\(did you mean "landed"\?\)/],
        [['change', 'close', ...at, '--status', 'abandonned', 'change-1'], /\(did you mean "abandoned"\?\)/],
        [['attest', ...at, '--verification', 'passed', 'ps-1'], /--verification must be one of unknown, pending, pass, fail, not "passed" \(did you mean "pass"\?\)/],
        [['patchset', 'push', ...at, '--change', 'change-1', '--author-mode', 'robot', '.'], /--author-mode must be one of human_only/],
        [['task', 'start', ...at, '--create', plan], /--item is required/],
      ];
      for (const [args, message] of cases) {
        const r = await cli(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
        expect(r.stderr, args.join(' ')).to.match(message);
        expect(r.stderr, args.join(' ')).to.not.include('idempotency key');
      }
      expect(port.connections(), 'a request reached the server').to.equal(0);
    } finally {
      await port.close();
    }
  });

  describe('against a server', () => {
    let server: TestServer;
    let repo: number;
    before(async () => {
      server = await startTestServer();
      await register(server.url, 'first');
      repo = await register(server.url, 'manners');
      const seed = path.join(tempDir(), 'seed');
      await fsp.mkdir(seed);
      await fsp.writeFile(path.join(seed, 'a.txt'), 'a\n');
      const pushed = await cli(['push', '--server', server.url, '--repo', String(repo), '--line', 'main', seed]);
      expect(pushed.code, pushed.stderr).to.equal(0);
      const task = await cli(['--as', 'alice', 'task', 'create', '--server', server.url, '--repo', String(repo), '--title', 'T', '--intent', 'I']);
      expect(task.code, task.stderr).to.equal(0);
      const change = await cli(['--as', 'alice', 'change', 'create', '--server', server.url, '--repo', String(repo), '--task', 'task-1', '--title', 'T', '--base-line', 'main']);
      expect(change.code, change.stderr).to.equal(0);
    });
    after(() => server.stop());

    it('every command takes --server and --repo from a working copy, or from a git remote that points at cairn', async () => {
      const wc = path.join(tempDir(), 'wc');
      expect((await cli(['checkout', '--server', server.url, '--repo', String(repo), '--line', 'main', '--quiet', wc])).code).to.equal(0);
      const sub = path.join(wc, 'deeper');
      await fsp.mkdir(sub);
      for (const args of [['change', 'list'], ['lines'], ['log'], ['repo', 'rules'], ['queue', 'list'], ['comments', 'change-1']]) {
        const r = await run(args, sub);
        expect(r.code, `${args.join(' ')} in a working copy: ${r.stderr}`).to.equal(0);
      }
      const changes = JSON.parse((await run(['change', 'list'], sub)).stdout);
      expect(changes.changes.map((c: { title: string }) => c.title)).to.deep.equal(['T']);

      const clone = tempDir();
      expect(spawnSync('git', ['init', '-q', clone]).status).to.equal(0);
      expect(spawnSync('git', ['-C', clone, 'remote', 'add', 'origin', `${server.url}/v1/native/repository-authorities/${repo}/git/main.git`]).status).to.equal(0);
      for (const args of [['change', 'list'], ['lines'], ['change', 'show', 'change-1']]) {
        const r = await run(args, clone);
        expect(r.code, `${args.join(' ')} in a git clone: ${r.stderr}`).to.equal(0);
      }
      expect(JSON.parse((await run(['lines'], clone)).stdout).lines.map((l: { name: string }) => l.name)).to.include('main');
      // log starts at the remote's line (…/git/main.git).
      const log = await run(['log'], clone);
      expect(log.code, log.stderr).to.equal(0);
      expect(JSON.parse(log.stdout).snapshots).to.have.length(1);
      // Another server named explicitly: the working copy's repository index is not carried over.
      const elsewhere = await run(['change', 'list', '--server', 'http://127.0.0.1:9'], sub);
      expect(elsewhere.code).to.equal(2);
      expect(elsewhere.stderr).to.match(/--repo N is required/);
      // Nowhere: say what to give.
      const nowhere = await run(['change', 'list'], tempDir());
      expect(nowhere.code).to.equal(2);
      expect(nowhere.stderr).to.match(/--server URL is required/);
    });

    it('checkout of a line that does not exist refuses, names the close one and --create, and writes nothing', async () => {
      const dir = path.join(tempDir(), 'typo');
      const r = await cli(['checkout', '--server', server.url, '--repo', String(repo), '--line', 'mian', dir]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include('line "mian" does not exist in repository').and.include('(did you mean "main"?)').and.include('--create');
      expect(existsSync(dir)).to.equal(false);
      const made = await cli(['checkout', '--server', server.url, '--repo', String(repo), '--line', 'new-line', '--create', dir]);
      expect(made.code, made.stderr).to.equal(0);
      expect(JSON.parse(await fsp.readFile(path.join(dir, '.cairn/config.json'), 'utf8'))).to.include({ line: 'new-line', base: null });
    });
  });

  it('cairn completion bash completes commands, sub-commands and options from the command table and the help texts', async function () {
    if (spawnSync('bash', ['--version']).status !== 0) this.skip();
    const bin = tempDir();
    await fsp.writeFile(path.join(bin, 'cairn'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
    const script = `source <(cairn completion bash)
t() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _cairn; echo "\${COMPREPLY[*]}"; }
t cairn chec; t cairn help qu; t cairn queue a; t cairn land --mo; t cairn completion z`;
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout.split('\n')).to.deep.equal(['checkout', 'queue', 'add', '--mode', 'zsh', '']);
    const zsh = await cli(['completion', 'zsh']);
    expect(zsh.code).to.equal(0);
    expect(zsh.stdout).to.match(/^#compdef cairn/).and.include('compdef _cairn cairn');
    if (spawnSync('zsh', ['--version']).status === 0) expect(spawnSync('zsh', ['-n'], { input: zsh.stdout }).status).to.equal(0);
    expect((await cli(['completion', 'fish'])).code).to.equal(2);
  });
});
