#!/usr/bin/env node
// Thin entry: all behaviour lives in the compiled CLI (dist/lib/cli/main.js, built by `npm ci`).
import { main } from '../dist/lib/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { process.stderr.write(`cairn: ${err && err.message ? err.message : err}\n`); process.exitCode = 1; },
);
