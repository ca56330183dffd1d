#!/usr/bin/env node
// Thin entry: all behaviour lives in the compiled CLI (dist/lib/cli/main.js: in a clone `npm ci`
// or `npm run build` compiles it; the packed package ships it).
import { fileURLToPath } from 'node:url';

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
