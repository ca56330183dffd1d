// The test processes' own environment (CONTRIBUTING.md "How tests isolate their environment").
// Loaded before any test file (.mocharc.cjs `require`, in each parallel worker too) and by
// test/helpers.ts (for `mocha --no-config` runs of one file): HOME and the XDG directories point
// into a fresh temporary directory, and the caller's CAIRN_* settings, git configuration and
// output preferences are dropped, so `cairn config set user.name carol`, a ~/.gitconfig or an
// exported CAIRN_USER on the machine running the suite changes no test. Every child process a
// test starts (the CLI, a server, git, chromium) inherits this environment.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** CAIRN_* variables that steer the test harness itself (docs in CONTRIBUTING.md), not the code under test. */
export const HARNESS_KNOBS: readonly string[] = ['CAIRN_CHROMIUM', 'CAIRN_TEST_VERBOSE'];

/** Output preferences of the person running the suite that tests check the defaults of. */
const PREFERENCES = ['NO_COLOR', 'FORCE_COLOR', 'PAGER', 'LESS'];

const DONE = Symbol.for('cairn.test.hermetic-env');

/** The temporary home of this process's tests. */
export function testHome(): string {
  return (globalThis as Record<symbol, string | undefined>)[DONE] ?? isolate();
}

function isolate(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'cairn-test-home-'));
  (globalThis as Record<symbol, string | undefined>)[DONE] = home;
  for (const name of Object.keys(process.env)) {
    if ((name.startsWith('CAIRN_') && !HARNESS_KNOBS.includes(name)) || name.startsWith('GIT_') || PREFERENCES.includes(name)) delete process.env[name];
  }
  const xdg = { XDG_CONFIG_HOME: '.config', XDG_DATA_HOME: '.local/share', XDG_STATE_HOME: '.local/state', XDG_CACHE_HOME: '.cache' };
  for (const [name, rel] of Object.entries(xdg)) {
    mkdirSync(path.join(home, rel), { recursive: true });
    process.env[name] = path.join(home, rel);
  }
  process.env.HOME = home;
  // git reads neither /etc/gitconfig nor the runner's ~/.gitconfig; tests that commit name
  // their author and committer themselves (test/git-fixture.ts), as on a fresh CI machine.
  const gitconfig = path.join(home, '.gitconfig');
  writeFileSync(gitconfig, '');
  process.env.GIT_CONFIG_NOSYSTEM = '1';
  process.env.GIT_CONFIG_GLOBAL = gitconfig;
  process.env.GIT_TERMINAL_PROMPT = '0';
  process.on('exit', () => rmSync(home, { recursive: true, force: true }));
  return home;
}

testHome();
