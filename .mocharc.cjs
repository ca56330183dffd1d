// The whole suite (`npm test`): every dist/test/**/*.test.js once, two files at a time. The
// longest files start first — the run ends when its last file does, and a long file started
// last would leave the other worker idle meanwhile. LONG_FIRST is a hint measured from CI's
// spec output: a file missing from it runs in name order after those; a name that no longer
// exists is skipped.
const fs = require('node:fs');

// Browser files alternate with the others, so that the two workers rarely drive two Chromiums at once.
const LONG_FIRST = [
  'ui', 'lease-etcd', 'ui-change-page', 'docs-operations-runbook', 'ui-threads', 'pull-soak', 'ui-a11y',
  'archive-sync-swift', 'ui-access', 'archive-store', 'git-push', 'content-cli', 'archive-outage-swift',
  'archive-ship-swift', 'jobs', 'diffs', 'git-serve', 'archive-outage-rpo-swift',
].map((name) => `dist/test/${name}.test.js`);

const all = fs.globSync('dist/test/**/*.test.js').sort();
const first = LONG_FIRST.filter((file) => all.includes(file));

module.exports = {
  spec: [...first, ...all.filter((file) => !first.includes(file))],
  require: ['dist/test/hermetic-env.js'],
  timeout: 60000,
  exit: true,
  parallel: true,
  jobs: 2,
};
