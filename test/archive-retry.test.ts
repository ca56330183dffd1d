// How soon shipping tries again after the store failed: an outage must cost the RPO at most a
// few seconds beyond its end (docs/operations.md "The RPO": the goal is the outage + 5 s), so
// the wait between two tries is bounded by RETRY_MAX_MS whatever the length of the outage —
// not a backoff that grows to 30 s and leaves a returned store unused for most of that.
import { expect } from 'chai';
import { RETRY_MAX_MS, retryDelayMs } from '../lib/archive/shipper.js';

describe('archive: the retry delay after store failures', () => {
  it('is the interval while nothing fails, and doubles from twice it after a failure', () => {
    expect(retryDelayMs(0, 1000)).to.equal(1000);
    expect(retryDelayMs(1, 100)).to.equal(200);
    expect(retryDelayMs(2, 100)).to.equal(400);
  });

  it('never exceeds 2 s at the default 1 s interval, however many tries failed (an outage of any length)', () => {
    expect(RETRY_MAX_MS).to.be.at.most(2000);
    for (let f = 1; f <= 1000; f++) expect(retryDelayMs(f, 1000), `after ${f} failures`).to.be.at.most(2000);
    // The start's tries (every 0.5 s at first) are bounded the same way.
    for (let f = 1; f <= 1000; f++) expect(retryDelayMs(f, 250), `start, after ${f} failures`).to.be.at.most(2000);
  });

  it('a longer configured interval is kept: a failure never makes the shipper try more often than it ships', () => {
    expect(retryDelayMs(5, 10_000)).to.equal(10_000);
  });
});
