// docs/operations.md "Running as a service (systemd)": the server's and the runner's units, as
// written there, pass `systemd-analyze verify` (in a scratch root holding the system's own
// units and a stand-in for the ExecStart binary, so the check does not depend on where cairn
// is installed on the machine running the suite), with no warning about them; and they keep
// the properties the section promises: a user, a state directory, Restart=, no shell between
// systemd and node, KillMode=mixed, a stop timeout above --shutdown-seconds. The server's
// ExecStart line is then run (cairn from this checkout, the paths and port in a temp dir) and
// stopped with SIGTERM, as systemctl stop does: it serves, then exits 0.
import { expect } from 'chai';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, PROJECT_ROOT, ports, tempDir, until } from './helpers.js';

const OPERATIONS = readFileSync(path.join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));
const SYSTEM_UNITS = ['/usr/lib/systemd/system', '/lib/systemd/system'].find((p) => existsSync(path.join(p, 'sysinit.target')));

/** The section's unit files: name → text (dedented; each block starts with `# /etc/systemd/system/NAME`). */
export function serviceUnits(markdown: string): Map<string, string> {
  const start = markdown.indexOf('\n### Running as a service (systemd)\n');
  if (start < 0) throw new Error('docs/operations.md has no "### Running as a service (systemd)" section');
  const rest = markdown.slice(start + 1);
  const next = rest.search(/\n#{2,3} /); // the next heading of the same or a higher level
  const section = next < 0 ? rest : rest.slice(0, next);
  const units = new Map<string, string>();
  for (const m of section.matchAll(/^( *)```ini\n([\s\S]*?)^\1```$/gm)) {
    const indent = m[1].length;
    const text = m[2].split('\n').map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length))).join('\n');
    const name = /^# \/etc\/systemd\/system\/([\w@.-]+\.service)\n/.exec(text);
    if (!name) throw new Error(`an ini block of the section does not start with its path:\n${text}`);
    units.set(name[1], text);
  }
  return units;
}

/** `Key=value` lines of one section of a unit (the last one wins, as in systemd; comments skipped). */
function settings(unit: string, section: string): Map<string, string> {
  const out = new Map<string, string>();
  let current = '';
  for (const line of unit.split('\n')) {
    const header = /^\[(\w+)\]$/.exec(line.trim());
    if (header) current = header[1];
    else if (current === section && /^\w+=/.test(line)) out.set(line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1));
  }
  return out;
}

describe('docs/operations.md: the systemd units', function () {
  this.timeout(60_000);
  const units = serviceUnits(OPERATIONS);

  it('has the server\'s and the runner\'s unit, each with a user, a state directory, Restart=, KillMode=mixed and a direct ExecStart', () => {
    expect([...units.keys()].sort()).to.deep.equal(['cairn-runner.service', 'cairn.service']);
    for (const [name, unit] of units) {
      const s = settings(unit, 'Service');
      expect(s.get('User'), name).to.match(/^cairn/);
      expect(s.get('StateDirectory'), name).to.match(/^cairn/);
      expect(s.get('Restart'), name).to.equal('on-failure');
      expect(s.get('KillMode'), name).to.equal('mixed');
      const exec = s.get('ExecStart')!.split(/\s+/);
      expect(exec[0], `${name}: ExecStart runs cairn itself, no shell`).to.match(/^\/\S*\/cairn$/);
      expect(exec[1], name).to.equal(name === 'cairn.service' ? 'serve' : 'runner');
      expect(settings(unit, 'Install').get('WantedBy'), name).to.equal('multi-user.target');
    }
    const server = settings(units.get('cairn.service')!, 'Service');
    const shutdown = Number(/--shutdown-seconds (\d+)/.exec(server.get('ExecStart')!)?.[1] ?? 10);
    expect(Number(server.get('TimeoutStopSec'))).to.be.greaterThan(shutdown);
    expect(server.get('ExecStart')).to.include(`--data /var/lib/${server.get('StateDirectory')}/`);
  });

  it('systemd-analyze verify accepts both units without a warning', function () {
    if (!ANALYZE || !SYSTEM_UNITS) {
      // .ci/run installs Debian's systemd, so in CI this check always runs.
      if (process.env.CI) throw new Error('systemd-analyze is not installed (apt-get install systemd; .ci/run installs it)');
      console.log('      SKIPPED: needs systemd-analyze and the system\'s units (apt-get install systemd; .ci/run installs it)');
      this.skip();
    }
    const root = tempDir('cairn-units-');
    mkdirSync(path.join(root, 'usr/lib/systemd'), { recursive: true });
    cpSync(SYSTEM_UNITS!, path.join(root, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
    mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
    for (const [name, unit] of units) {
      writeFileSync(path.join(root, 'etc/systemd/system', name), unit);
      // verify checks that ExecStart's program exists and is executable: a stand-in at that path.
      const program = path.join(root, settings(unit, 'Service').get('ExecStart')!.split(/\s+/)[0]);
      mkdirSync(path.dirname(program), { recursive: true });
      writeFileSync(program, '#!/bin/sh\n');
      chmodSync(program, 0o755);
    }
    for (const name of units.keys()) {
      const r = spawnSync(ANALYZE!, ['verify', '--man=no', `--root=${root}`, name], { encoding: 'utf8' });
      const out = `${r.stdout}${r.stderr}`;
      expect(r.status, `${name}:\n${out}`).to.equal(0);
      // verify reports a bad line as a warning ("...: Unknown key ..., ignoring") and still exits 0.
      expect(out.split('\n').filter((l) => l.includes('cairn')), out).to.deep.equal([]);
    }
    // The check can fail: the same unit with a misspelt setting is reported.
    writeFileSync(path.join(root, 'etc/systemd/system/cairn.service'), units.get('cairn.service')!.replace('KillMode=mixed', 'KillMode=mixd'));
    const bad = spawnSync(ANALYZE!, ['verify', '--man=no', `--root=${root}`, 'cairn.service'], { encoding: 'utf8' });
    expect(`${bad.stdout}${bad.stderr}`).to.match(/cairn\.service:\d+: .*kill mode/i);
  });

  it('the server\'s ExecStart serves, and SIGTERM (systemctl stop) ends it with status 0', async () => {
    const unit = settings(units.get('cairn.service')!, 'Service');
    const dir = tempDir('cairn-unit-run-');
    const state = `/var/lib/${unit.get('StateDirectory')}`;
    for (let attempt = 0; ; attempt++) {
      const port = ports.pick();
      const argv = unit.get('ExecStart')!.split(/\s+/).slice(1)
        .map((a) => a.replaceAll(state, dir).replace('127.0.0.1:8088', `127.0.0.1:${port}`));
      const child = spawn(process.execPath, [CLI, ...argv], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => { out += d; });
      child.stderr!.on('data', (d) => { out += d; });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const up = await until('the unit\'s server', async () => {
        if (child.exitCode !== null) return 'exited';
        try { return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json() as { ready: boolean }).ready ? 'up' : null; } catch { return null; }
      }, 30_000);
      if (up !== 'up') {
        if (attempt < 3 && out.includes('EADDRINUSE')) continue;
        throw new Error(`the unit's ExecStart did not serve:\n${out}`);
      }
      child.kill('SIGTERM');
      expect(await exited, out).to.equal(0);
      expect(existsSync(path.join(dir, 'data')), 'the data directory inside the state directory').to.equal(true);
      break;
    }
  });
});
