// Moved blocks of a file's diff (lib/domain/workflow/moved-lines.ts): git's --color-moved rule
// (a block of at least 3 lines and 20 letters or digits), whitespace modes, and the bounds.
import { expect } from 'chai';
import { lineDiff, type Hunk } from '../lib/domain/workflow/content-diff.js';
import { CrossFileMoves, MAX_CROSS_MOVED_LINES, MAX_MOVED_LINES, markMoves } from '../lib/domain/workflow/moved-lines.js';

function hunks(before: string[], after: string[], context = 0): Hunk[] {
  const d = lineDiff(Buffer.from(`${before.join('\n')}\n`), Buffer.from(`${after.join('\n')}\n`), context);
  if (d.kind !== 'text') throw new Error(d.kind);
  return d.hunks;
}

/** `-OLD>NEW` for each removed line and `+NEW<OLD` for each added one (undefined: not moved). */
function marks(hs: Hunk[]): string[] {
  const out: string[] = [];
  for (const h of hs) {
    let o = h.old_start;
    let n = h.new_start;
    h.lines.forEach((l, i) => {
      if (l[0] === '-') out.push(`-${o++}>${h.moved_to?.[i] ?? '.'}`);
      else if (l[0] === '+') out.push(`+${n++}<${h.moved_from?.[i] ?? '.'}`);
      else if (l[0] === ' ') { o++; n++; }
    });
  }
  return out;
}

const block = ['function total(items) {', '  return items.reduce((a, b) => a + b.price, 0);', '}'];
const other = ['const a = 1;', 'const b = 2;', 'const c = 3;', 'const d = 4;'];

describe('moved lines (git --color-moved)', () => {
  it('a block moved down the file is marked on both sides, each line with the other side\'s line number', () => {
    const hs = hunks([...block, ...other], [...other, ...block]);
    markMoves(hs);
    expect(marks(hs)).to.deep.equal(['-1>5', '-2>6', '-3>7', '+5<1', '+6<2', '+7<3']);
  });

  it('a real edit is not a move; a moved block with an edited line inside is two shorter runs (each must be 3 lines)', () => {
    const edit = hunks(['alpha beta gamma delta', 'one two three', 'x'], ['alpha beta gamma epsilon', 'one two three four', 'x']);
    markMoves(edit);
    expect(marks(edit).every((m) => m.endsWith('.'))).to.equal(true);
    const five = ['let first = computeTheFirstValue();', 'let second = computeTheSecondValue();', 'let third = computeTheThirdValue();', 'let fourth = computeTheFourthValue();', 'let fifth = computeTheFifthValue();'];
    const edited = [...five.slice(0, 2), 'let third = somethingElseEntirely();', ...five.slice(3)];
    const hs = hunks([...five, ...other], [...other, ...edited]);
    markMoves(hs);
    // two lines either side of the edit: neither run reaches 3 lines
    expect(marks(hs).every((m) => m.endsWith('.'))).to.equal(true);
  });

  it('a block of fewer than 20 letters and digits (braces, blank lines, short words) is not a move', () => {
    const small = ['}', '', '}'];
    const hs = hunks([...small, ...other], [...other, ...small]);
    markMoves(hs);
    expect(marks(hs).every((m) => m.endsWith('.'))).to.equal(true);
  });

  it('with a whitespace mode, a block moved and re-indented is a move (ignore-all), not without it', () => {
    const indented = block.map((l) => `    ${l}`);
    const plain = hunks([...block, ...other], [...other, ...indented]);
    markMoves(plain);
    expect(marks(plain).every((m) => m.endsWith('.'))).to.equal(true);
    const ws = hunks([...block, ...other], [...other, ...indented]);
    markMoves(ws, (t) => t.replace(/[ \t\r\v\f]+/g, ''));
    expect(marks(ws)).to.deep.equal(['-1>5', '-2>6', '-3>7', '+5<1', '+6<2', '+7<3']);
  });

  it('each added line is matched once: a block removed once and added twice marks one copy', () => {
    const hs = hunks([...block, ...other], [...other, ...block, 'const e = 5;', ...block]);
    markMoves(hs);
    expect(marks(hs).filter((m) => !m.endsWith('.'))).to.have.length(6);
  });

  it('bounded: a file with more changed lines than MAX_MOVED_LINES is not searched; a hunk with no move has null marks', () => {
    const many = Array.from({ length: MAX_MOVED_LINES / 2 + 1 }, (_, i) => `const value${i} = ${i} * 1000;`);
    const hs = hunks(many, [...many.slice(1), 'tail line', ...many.slice(0, 1)].reverse());
    markMoves(hs);
    expect(hs.every((h) => h.moved_to === null && h.moved_from === null)).to.equal(true);
  });
});

describe('moved lines across files', () => {
  /** Each file's diff as the diff route makes it (its moves within it marked first), fed in path order. */
  function cross(files: Array<[string, string[], string[]]>, normalize: ((t: string) => string) | null = null): { moves: ReturnType<CrossFileMoves['moves']>; c: CrossFileMoves } {
    const c = new CrossFileMoves(normalize);
    for (const [path, before, after] of files) {
      const hs = hunks(before, after, 3);
      markMoves(hs, normalize);
      c.add(path, hs);
    }
    return { moves: c.moves(), c };
  }
  const helper = ['export function formatPrice(cents: number): string {', '  const euros = Math.floor(cents / 100);', '  return `${euros}.${String(cents % 100).padStart(2, "0")} EUR`;', '}'];
  const pad = (name: string, n: number) => Array.from({ length: n }, (_, i) => `export const ${name}${i} = ${i};`);

  it('a block deleted from one file and added to another (either order of the two files) is one move, with both paths and first lines', () => {
    // a.ts loses the helper (lines 6-9); b.ts gains it after its line 4
    const a = [...pad('a', 5), ...helper, ...pad('z', 5)];
    const { moves } = cross([['src/a.ts', a, [...pad('a', 5), ...pad('z', 5)]], ['src/b.ts', pad('b', 8), [...pad('b', 4), ...helper, ...pad('b', 8).slice(4)]]]);
    expect(moves).to.deep.equal([{ from: { path: 'src/a.ts', line: 6 }, to: { path: 'src/b.ts', line: 5 }, lines: 4 }]);
    // the file it goes to may come first in path order
    const back = cross([['lib/0-first.ts', pad('b', 8), [...pad('b', 4), ...helper, ...pad('b', 8).slice(4)]], ['lib/1-second.ts', a, [...pad('a', 5), ...pad('z', 5)]]]).moves;
    expect(back).to.deep.equal([{ from: { path: 'lib/1-second.ts', line: 6 }, to: { path: 'lib/0-first.ts', line: 5 }, lines: 4 }]);
  });

  it('a whole file deleted and its code added into another (an added and a deleted file) is a move', () => {
    const { moves } = cross([['old/helper.ts', helper, []], ['src/util.ts', pad('u', 3), [...pad('u', 3), '', ...helper]]]);
    expect(moves).to.deep.equal([{ from: { path: 'old/helper.ts', line: 1 }, to: { path: 'src/util.ts', line: 5 }, lines: 4 }]);
  });

  it('a block moved and changed slightly is not one move: the unchanged runs on either side of the edit count on their own when each has 3 lines and 20 letters or digits; the edited line is a delete and an add', () => {
    const eight = Array.from({ length: 8 }, (_, i) => `  const step${i} = compute(step${i - 1 < 0 ? 'Start' : i - 1}, ${i});`);
    const edited = [...eight.slice(0, 4), '  const step4 = computeDifferently(step3, 4);', ...eight.slice(5)];
    const { moves } = cross([['a.ts', [...pad('a', 4), ...eight], pad('a', 4)], ['b.ts', pad('b', 2), [...pad('b', 2), ...edited]]]);
    expect(moves).to.deep.equal([
      { from: { path: 'a.ts', line: 5 }, to: { path: 'b.ts', line: 3 }, lines: 4 },
      { from: { path: 'a.ts', line: 10 }, to: { path: 'b.ts', line: 8 }, lines: 3 },
    ]);
    // an edit every other line leaves no run of 3: nothing is moved
    const every = eight.map((l, i) => (i % 2 ? `${l} // edited` : l));
    expect(cross([['a.ts', [...pad('a', 4), ...eight], pad('a', 4)], ['b.ts', pad('b', 2), [...pad('b', 2), ...every]]]).moves).to.deep.equal([]);
  });

  it('the rule of a move within a file: fewer than 3 lines or 20 letters and digits is no move; the whitespace mode compares the lines', () => {
    const two = helper.slice(0, 2);
    expect(cross([['a.ts', [...pad('a', 3), ...two], pad('a', 3)], ['b.ts', pad('b', 3), [...pad('b', 3), ...two]]]).moves).to.deep.equal([]);
    const braces = ['}', '});', '', '}'];
    expect(cross([['a.ts', [...pad('a', 3), ...braces], pad('a', 3)], ['b.ts', pad('b', 3), [...pad('b', 3), ...braces]]]).moves).to.deep.equal([]);
    const indented = helper.map((l) => `    ${l}`);
    const files: Array<[string, string[], string[]]> = [['a.ts', [...pad('a', 3), ...helper], pad('a', 3)], ['b.ts', pad('b', 3), [...pad('b', 3), ...indented]]];
    expect(cross(files).moves).to.deep.equal([]);
    expect(cross(files, (t) => t.replace(/[ \t\r\v\f]+/g, '')).moves).to.have.length(1);
  });

  it('a move within a file is left to that file (its lines are not offered to other files); each added line is matched once; a block copied to two files moves to one', () => {
    // within a.ts the helper moves down: that is the file's own move, not one to b.ts
    const { moves } = cross([['a.ts', [...helper, ...pad('a', 6)], [...pad('a', 6), ...helper]], ['b.ts', pad('b', 2), [...pad('b', 2), ...helper]]]);
    expect(moves).to.deep.equal([]);
    const twice = cross([['a.ts', [...pad('a', 3), ...helper], pad('a', 3)], ['b.ts', pad('b', 2), [...pad('b', 2), ...helper]], ['c.ts', pad('c', 2), [...pad('c', 2), ...helper]]]).moves;
    expect(twice).to.deep.equal([{ from: { path: 'a.ts', line: 4 }, to: { path: 'b.ts', line: 3 }, lines: 4 }]);
  });

  it('bounded: past MAX_CROSS_MOVED_LINES kept lines the later files are not searched (limited), and the search makes no all-pairs comparison', () => {
    const c = new CrossFileMoves();
    const big = Array.from({ length: MAX_CROSS_MOVED_LINES / 2 }, (_, i) => `export const big${i} = ${i} * 7;`);
    const add = (path: string, before: string[], after: string[]) => { const hs = hunks(before, after, 0); markMoves(hs); c.add(path, hs); };
    add('a.ts', big, []);
    add('b.ts', [], big.map((l) => `${l} // b`));
    expect(c.limited).to.equal(false);
    add('c.ts', [], helper);
    expect(c.limited).to.equal(true);
    // 25,000 removed lines against 25,000 added ones with no equal window: no line compared
    expect(c.moves()).to.deep.equal([]);
    expect(c.steps).to.equal(0);
    // the same lines: each window finds its one candidate, so comparisons stay linear, not 25,000²
    const d = new CrossFileMoves();
    const h1 = hunks(big, [], 0); markMoves(h1); d.add('a.ts', h1);
    const h2 = hunks([], big, 0); markMoves(h2); d.add('b.ts', h2);
    expect(d.moves()).to.deep.equal([{ from: { path: 'a.ts', line: 1 }, to: { path: 'b.ts', line: 1 }, lines: big.length }]);
    expect(d.steps).to.be.at.most(big.length + 1);
  });
});
