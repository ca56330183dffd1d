// The test harness itself: the environment every test runs in (test/hermetic-env.ts) and the
// child servers of test/helpers.ts.
import { expect } from 'chai';
import { existsSync, promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli, ports, register, spawnServer, startTestServer, tempDir } from './helpers.js';
import { HARNESS_KNOBS } from './hermetic-env.js';
describe('test harness: child servers', function () {
    this.timeout(60_000);
    it('spawnServer never takes another server on the port it picked for its child: the child retries elsewhere', async () => {
        // Another server (here one in this process) already listens on the port picked first: its
        // /healthz answers 200 while the child fails to listen (EADDRINUSE).
        const foreign = await startTestServer();
        const taken = Number(new URL(foreign.url).port);
        const pick = ports.pick;
        let first = true;
        ports.pick = () => (first ? ((first = false), taken) : pick());
        try {
            const data = path.join(tempDir(), 'data');
            const child = await spawnServer(data);
            try {
                expect(child.url).to.not.equal(foreign.url);
                // What the returned address is asked lands in the child's data directory.
                const repo = await register(child.url, 'mine');
                expect(await fsp.readdir(path.join(data, 'repositories'))).to.include(String(repo));
                expect(await fsp.readdir(path.join(foreign.dataDir, 'repositories'))).to.deep.equal([]);
            }
            finally {
                child.proc.kill('SIGTERM');
                await child.exited;
            }
        }
        finally {
            ports.pick = pick;
            await foreign.stop();
        }
    });
});
describe('test harness: the environment (test/hermetic-env.ts)', function () {
    this.timeout(60_000);
    it('HOME and the XDG directories are a fresh temporary directory; no CAIRN_* setting and no git configuration of the caller', async () => {
        const home = process.env.HOME;
        expect(path.dirname(home)).to.equal(os.tmpdir());
        expect(path.basename(home)).to.match(/^cairn-test-home-/);
        expect(os.homedir()).to.equal(home);
        expect(process.env.XDG_CONFIG_HOME).to.equal(path.join(home, '.config'));
        expect(process.env.XDG_DATA_HOME).to.equal(path.join(home, '.local/share'));
        expect(existsSync(path.join(home, '.config', 'cairn'))).to.equal(false);
        expect(Object.keys(process.env).filter((n) => n.startsWith('CAIRN_') && !HARNESS_KNOBS.includes(n))).to.deep.equal([]);
        expect(Object.keys(process.env).filter((n) => n.startsWith('GIT_')).sort()).to.deep.equal(['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_TERMINAL_PROMPT']);
        expect(process.env.GIT_CONFIG_NOSYSTEM).to.equal('1');
        expect(await fsp.readFile(process.env.GIT_CONFIG_GLOBAL, 'utf8')).to.equal('');
        expect(process.env.NO_COLOR).to.equal(undefined);
        expect(process.env.PAGER).to.equal(undefined);
    });
    it('a child process inherits it: the CLI reads its config from the temporary home and acts as nobody', async () => {
        const where = await cli(['config', 'path']);
        expect(where.stdout.trim()).to.equal(path.join(process.env.HOME, '.config', 'cairn', 'config.json'));
        const name = await cli(['config', 'get', 'user.name']);
        expect(name.code, name.stdout).to.equal(1);
    });
});
//# sourceMappingURL=harness.test.js.map