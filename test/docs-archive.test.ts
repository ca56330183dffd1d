// docs/operations.md names the example archive one way, and never tells an operator to stop a
// server by a pid that may not be the server's (`npx cairn serve … &` leaves npm's pid in `$!`).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './helpers.js';

const OPERATIONS = readFileSync(path.join(PROJECT_ROOT, 'docs/operations.md'), 'utf8');

describe('docs/operations.md: the archive and stopping a server', () => {
  it('spells every archive URL one way (s3://bucket/prefix/, with the trailing slash)', () => {
    // Placeholders (s3://BUCKET/PREFIX/, s3://…) aside, every URL is the example archive's, or
    // the lease drill's own archive beside it (a fresh writer, so not the archive drill's).
    const urls = [...OPERATIONS.matchAll(/s3:\/\/[^\s`"')]+/gi)].map((m) => m[0]).filter((u) => !/^s3:\/\/(…|BUCKET)/.test(u));
    expect(urls.length).to.be.greaterThan(5);
    // …and the cluster drill's, one prefix per node.
    expect([...new Set(urls)].sort()).to.deep.equal(['s3://backups/cairn/', 's3://backups/leased/', 's3://backups/nodes/$NODE/']);
  });

  it('stops a server by its pid file or its service manager, never by a bare kill -TERM', () => {
    for (const line of OPERATIONS.split('\n').filter((l) => /kill -(TERM|STOP|CONT)/.test(l))) {
      expect(line, line).to.match(/kill -(TERM|STOP|CONT) "\$\(cat [^)]*cairn\.lock\.pid\)"/);
    }
  });
});
