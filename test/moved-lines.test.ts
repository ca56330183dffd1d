// Moved blocks of a file's diff (lib/domain/workflow/moved-lines.ts): git's --color-moved rule
// (a block of at least 3 lines and 20 letters or digits), whitespace modes, and the bounds.
import { expect } from 'chai';
import { lineDiff, type Hunk } from '../lib/domain/workflow/content-diff.js';
import { MAX_MOVED_LINES, markMoves } from '../lib/domain/workflow/moved-lines.js';

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
