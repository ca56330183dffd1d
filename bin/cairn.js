#!/usr/bin/env node
// Thin entry: all behaviour lives in the compiled CLI (dist/lib/cli/main.js: in a clone `npm ci`
// or `npm run build` compiles it; the packed package ships it).
import('../dist/lib/cli/main.js').then(
  ({ main }) => main(process.argv.slice(2)).then(
    (code) => { if (typeof code === 'number') process.exitCode = code; },
    fail,
  ),
  (err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/lib/cli/main.js')) {
      process.stderr.write(`cairn: the compiled CLI is missing (${new URL('../dist/lib/cli/main.js', import.meta.url).pathname}): run \`npm run build\` in the checkout\n`);
      process.exitCode = 1;
    } else fail(err);
  },
);

function fail(err) {
  process.stderr.write(`cairn: ${err && err.message ? err.message : err}\n`);
  process.exitCode = 1;
}
