// The attention rule (lib/domain/workflow/attention.ts) as properties over random review
// histories: who is asked to act, and why, follows from the records alone.
import { expect } from 'chai';
import fc from 'fast-check';
import { attention, type AttentionInput, type AttentionReview } from '../lib/domain/workflow/attention.js';

const PEOPLE = ['alice', 'bob', 'carol', 'dan'];
const ACTIONS = ['request', 'approve', 'request_changes', 'comment', 'dismiss', 'code_review_summary'];

const input: fc.Arbitrary<AttentionInput> = fc
  .record({
    open: fc.boolean(),
    owner: fc.option(fc.constantFrom(...PEOPLE), { nil: null }),
    current: fc.integer({ min: 0, max: 3 }),
    reviews: fc.array(fc.record({ reviewer: fc.constantFrom(...PEOPLE), action: fc.constantFrom(...ACTIONS), blocking: fc.boolean(), ps: fc.integer({ min: 1, max: 3 }) }), { maxLength: 14 }),
    ci: fc.constantFrom('none', 'pending', 'pass', 'fail', 'error') as fc.Arbitrary<AttentionInput['ci']>,
    ejection: fc.option(fc.constantFrom('ci_failed', 'conflict', 'gates'), { nil: null }),
  })
  .map(({ open, owner, current, reviews, ci, ejection }) => ({
    open,
    owner,
    current_patchset: current,
    reviews: reviews.map((r, i): AttentionReview => ({
      sequence: i + 1,
      reviewer: r.reviewer,
      action: r.action,
      person_request: r.action === 'request',
      blocking: r.action === 'request' ? false : r.blocking,
      patchset: Math.min(r.ps, Math.max(current, 1)),
    })),
    ci,
    ejection,
  }));

const blocks = (r: AttentionReview) => r.blocking || r.action === 'request_changes';
const votes = (r: AttentionReview) => r.action === 'approve' || r.action === 'dismiss' || blocks(r);

describe('attention (property tests)', () => {
  it('a closed change, or one without a patchset, needs nobody', () => {
    fc.assert(fc.property(input, (x) => {
      if (!x.open || x.current_patchset === 0) expect(attention(x)).to.deep.equal([]);
    }), { numRuns: 500 });
  });

  it('each name at most once; only the owner and requested people are named', () => {
    fc.assert(fc.property(input, (x) => {
      const out = attention(x);
      const names = out.map((a) => a.name);
      expect(new Set(names).size).to.equal(names.length);
      for (const a of out) {
        if (a.name === x.owner) expect(['blocking_vote', 'ci_failed', 'ejected', 'conflict']).to.include(a.reason);
        else expect(x.reviews.some((r) => r.person_request && r.reviewer === a.name)).to.equal(true);
      }
    }), { numRuns: 1000 });
  });

  it('the owner is asked to act exactly after a block on the current patchset, a failed CI run, an ejection or a conflict', () => {
    fc.assert(fc.property(input, (x) => {
      if (!x.open || x.current_patchset === 0 || x.owner === null) return;
      const last = new Map<string, AttentionReview>();
      for (const r of x.reviews) if (votes(r)) last.set(r.reviewer, r);
      const block = [...last.values()].some((r) => blocks(r) && r.patchset === x.current_patchset);
      const expected = x.ejection === 'conflict' ? 'conflict' : x.ejection ? 'ejected' : x.ci === 'fail' || x.ci === 'error' ? 'ci_failed' : block ? 'blocking_vote' : null;
      const got = attention(x).find((a) => a.name === x.owner);
      expect(got?.reason ?? null).to.equal(expected);
    }), { numRuns: 1000 });
  });

  it('a requested person (not the owner) is asked until they act on the current patchset after their latest request', () => {
    fc.assert(fc.property(input, (x) => {
      if (!x.open || x.current_patchset === 0) return;
      const out = attention(x);
      for (const p of PEOPLE) {
        if (p === x.owner) continue;
        const reqs = x.reviews.filter((r) => r.person_request && r.reviewer === p);
        const got = out.find((a) => a.name === p);
        if (reqs.length === 0) { expect(got).to.equal(undefined); continue; }
        const latest = reqs[reqs.length - 1];
        const acted = x.reviews.some((r) => r.reviewer === p && r.action !== 'request' && r.sequence > latest.sequence && r.patchset === x.current_patchset);
        expect(got === undefined, `${p}: ${JSON.stringify(x)}`).to.equal(acted);
        if (got) expect(got.reason).to.equal(latest.patchset === x.current_patchset ? 'review_requested' : 'new_patchset');
      }
    }), { numRuns: 1000 });
  });

  it('a new patchset puts every requested person (not the owner) back, with reason new_patchset', () => {
    fc.assert(fc.property(input, (x) => {
      if (!x.open || x.current_patchset === 0) return;
      const next = { ...x, current_patchset: x.current_patchset + 1 };
      const out = attention(next).filter((a) => a.name !== x.owner);
      const asked = [...new Set(x.reviews.filter((r) => r.person_request && r.reviewer !== x.owner).map((r) => r.reviewer))];
      expect(out.map((a) => a.name).sort()).to.deep.equal(asked.sort());
      for (const a of out) expect(a.reason).to.equal('new_patchset');
    }), { numRuns: 500 });
  });

  it('acting on the current patchset takes a reviewer off the list and asks nobody new but the owner', () => {
    fc.assert(fc.property(input, fc.constantFrom(...PEOPLE), fc.constantFrom('approve', 'comment', 'request_changes'), (x, who, action) => {
      if (!x.open || x.current_patchset === 0) return;
      const before = attention(x).map((a) => a.name);
      const after = attention({ ...x, reviews: [...x.reviews, { sequence: x.reviews.length + 1, reviewer: who, action, person_request: false, blocking: false, patchset: x.current_patchset }] }).map((a) => a.name);
      if (who !== x.owner) expect(after).not.to.include(who);
      for (const n of after) if (!before.includes(n)) expect(n).to.equal(x.owner);
    }), { numRuns: 1000 });
  });
});

describe('attention: comments, replies and work in progress', () => {
  const base = (threads: AttentionInput['threads'], extra: Partial<AttentionInput> = {}): AttentionInput => ({
    open: true, owner: 'alice', current_patchset: 2, current_patchset_at_s: 100, ci: 'none', ejection: null,
    reviews: [{ sequence: 1, reviewer: 'bob', action: 'request', person_request: true, blocking: false, patchset: 2, at_s: 100 }],
    threads, ...extra,
  });
  const c = (sequence: number, author: string, at_s: number, patchset = 2) => ({ sequence, author, at_s, patchset });

  it('a reviewer\'s comment since the current patchset is the owner\'s move; an older one is not', () => {
    expect(attention(base([{ unresolved: true, comments: [c(1, 'bob', 100)] }]))).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }]);
    // Written on patchset 1 in the second patchset 2 was made: before it (the new patchset hands it back).
    expect(attention(base([{ unresolved: true, comments: [c(1, 'bob', 100, 1)] }]))).to.deep.equal([{ name: 'bob', reason: 'review_requested' }]);
    // A later second: after it, whatever patchset it names.
    expect(attention(base([{ unresolved: true, comments: [c(1, 'bob', 101, 1)] }]))).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }]);
    // A resolved thread asks nobody.
    expect(attention(base([{ unresolved: false, comments: [c(1, 'bob', 100)] }]))).to.deep.equal([]);
  });

  it('the owner\'s reply hands the thread back to the others in it until they act again', () => {
    const replied = { unresolved: true, comments: [c(1, 'bob', 100), c(2, 'carol', 100), c(3, 'alice', 101)] };
    expect(attention(base([replied]))).to.deep.equal([{ name: 'bob', reason: 'owner_replied' }, { name: 'carol', reason: 'owner_replied' }]);
    // carol comments elsewhere later: her move is made (and it is alice's again).
    expect(attention(base([replied, { unresolved: true, comments: [c(4, 'carol', 102)] }]))).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }, { name: 'bob', reason: 'owner_replied' }]);
    // bob approves in the same second as the reply: after it.
    const approved = base([replied], { reviews: [...base([]).reviews, { sequence: 2, reviewer: 'bob', action: 'approve', person_request: false, blocking: false, patchset: 2, at_s: 101 }] });
    expect(attention(approved)).to.deep.equal([{ name: 'carol', reason: 'owner_replied' }]);
  });

  it('work in progress asks only the owner', () => {
    fc.assert(fc.property(input, (x) => {
      const out = attention({ ...x, wip: true });
      for (const a of out) expect(a.name).to.equal(x.owner);
    }), { numRuns: 500 });
    expect(attention(base([{ unresolved: true, comments: [c(1, 'bob', 100)] }], { wip: true }))).to.deep.equal([{ name: 'alice', reason: 'reviewer_comment' }]);
  });
});
