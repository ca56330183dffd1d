// "Did you mean": the closest known word to a mistyped command, sub-command or option, by
// Damerau-Levenshtein distance (optimal string alignment: a swap of two neighbours is one edit).

/** Edits (insert, delete, substitute, swap neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known words close enough to `word` to be what was meant, closest first: within a third of
 * the word's length in edits (at least 1, at most 3), or the one word it is a prefix of.
 */
export function closest(word: string, known: readonly string[]): string[] {
  const w = word.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  const scored = known.map((k) => ({ k, d: editDistance(w, k.toLowerCase()) })).filter((s) => s.d > 0 && s.d <= limit);
  if (scored.length) {
    const best = Math.min(...scored.map((s) => s.d));
    return scored.filter((s) => s.d === best).map((s) => s.k);
  }
  const prefixed = w.length >= 2 ? known.filter((k) => k.toLowerCase().startsWith(w)) : [];
  return prefixed.length === 1 ? prefixed : [];
}

/** ` (did you mean "x"?)`, ` (did you mean "x" or "y"?)`, or '' when nothing is close. */
export function didYouMean(word: string, known: readonly string[], quote = (s: string) => `"${s}"`): string {
  const near = closest(word, known);
  if (!near.length) return '';
  const list = near.length === 1 ? quote(near[0]) : `${near.slice(0, -1).map(quote).join(', ')} or ${quote(near[near.length - 1])}`;
  return ` (did you mean ${list}?)`;
}
