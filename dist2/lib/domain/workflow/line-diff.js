// Which lines of two texts changed, as git decides it: Myers' O(ND) difference algorithm in
// linear space (the "middle snake", divide and conquer), with the preparation and the cost
// heuristics of git's xdiff, so the lines a diff adds and removes are the ones `git diff` (its
// default algorithm) counts. Before the search: the common head and tail are set aside, a line
// with no equal on the other side is changed outright, and a line with very many equals is
// changed when it sits in a run of such lines. During it: a split whose search grows past a cost
// (√ of the lines, at least 256) takes the furthest-reaching path found so far, so the work is
// about lines × that cost, never lines × edits. Memory: a few integer arrays of the line count.
//
// Lines are given as class numbers (equal lines, equal numbers: see `classify` in
// ./content-diff.ts), so how lines compare (whitespace modes) is decided once, outside.
const MAX_EQ_LIMIT = 1024;
const SIMSCAN_WINDOW = 100;
const KPDIS_RUN = 4;
const MAX_COST_MIN = 256;
const HEUR_MIN_COST = 256;
const SNAKE_CNT = 20;
const K_HEUR = 4;
const LINE_MAX = 0x7fffffff;
/** The cost bound of every split once the work bound is reached: the rest costs about lines × this. */
const COARSE_COST = 16;
/** Search steps (diagonals visited and snake steps) before the search turns coarse: about half a second. */
export const DEFAULT_WORK_LIMIT = 100_000_000;
/** xdiff's rough square root: the power of two with about half the bits of n. */
function bogosqrt(n) {
    let i = 1;
    for (; n > 0; n = Math.floor(n / 4))
        i *= 2;
    return i;
}
/**
 * Whether a line with many equals (dis 2) is dropped from the search: it is, when the lines
 * around it (up to SIMSCAN_WINDOW each way) are mostly lines without an equal, so a block of
 * new text does not get stitched to the old by its blank lines and braces.
 */
function dropMultimatch(dis, i, s, e) {
    if (i - s > SIMSCAN_WINDOW)
        s = i - SIMSCAN_WINDOW;
    if (e - i > SIMSCAN_WINDOW)
        e = i + SIMSCAN_WINDOW;
    let none0 = 0;
    let many0 = 1;
    for (let r = 1; i - r >= s; r++) {
        const d = dis[i - r];
        if (d === 0)
            none0++;
        else if (d === 2)
            many0++;
        else
            break;
    }
    if (none0 === 0)
        return false;
    let none1 = 0;
    let many1 = 1;
    for (let r = 1; i + r <= e; r++) {
        const d = dis[i + r];
        if (d === 0)
            none1++;
        else if (d === 2)
            many1++;
        else
            break;
    }
    if (none1 === 0)
        return false;
    const none = none0 + none1;
    const many = many0 + many1;
    return many * KPDIS_RUN < many + none;
}
/**
 * The changed lines of `a` → `b` (class numbers below `classes`). `workLimit` bounds the steps of
 * the search (diagonals visited and snake steps) as a safety net; see `complete`.
 */
export function lineChanges(a, b, classes, workLimit = DEFAULT_WORK_LIMIT) {
    const n1 = a.length;
    const n2 = b.length;
    const removed = new Uint8Array(n1);
    const added = new Uint8Array(n2);
    // The common head and tail.
    const lim = Math.min(n1, n2);
    let start = 0;
    while (start < lim && a[start] === b[start])
        start++;
    let tail = 0;
    while (tail < lim - start && a[n1 - 1 - tail] === b[n2 - 1 - tail])
        tail++;
    const end1 = n1 - tail - 1;
    const end2 = n2 - tail - 1;
    // How often each class occurs on each side (whole files, as xdiff counts).
    const in1 = new Int32Array(classes);
    const in2 = new Int32Array(classes);
    for (let i = 0; i < n1; i++)
        in1[a[i]]++;
    for (let j = 0; j < n2; j++)
        in2[b[j]]++;
    // dis: 0 no equal on the other side, 1 some, 2 many (at least √ of the other side's lines, ≤ 1024).
    const dis1 = new Uint8Array(n1);
    const dis2 = new Uint8Array(n2);
    const mlim1 = Math.min(bogosqrt(n1), MAX_EQ_LIMIT);
    for (let i = start; i <= end1; i++) {
        const nm = in2[a[i]];
        dis1[i] = nm === 0 ? 0 : nm >= mlim1 ? 2 : 1;
    }
    const mlim2 = Math.min(bogosqrt(n2), MAX_EQ_LIMIT);
    for (let j = start; j <= end2; j++) {
        const nm = in1[b[j]];
        dis2[j] = nm === 0 ? 0 : nm >= mlim2 ? 2 : 1;
    }
    // The lines the search runs on (the others are changed now), and where each came from.
    const idx1 = [];
    const idx2 = [];
    for (let i = start; i <= end1; i++) {
        if (dis1[i] === 1 || (dis1[i] === 2 && !dropMultimatch(dis1, i, start, end1)))
            idx1.push(i);
        else
            removed[i] = 1;
    }
    for (let j = start; j <= end2; j++) {
        if (dis2[j] === 1 || (dis2[j] === 2 && !dropMultimatch(dis2, j, start, end2)))
            idx2.push(j);
        else
            added[j] = 1;
    }
    const N1 = idx1.length;
    const N2 = idx2.length;
    const h1 = Int32Array.from(idx1, (i) => a[i]);
    const h2 = Int32Array.from(idx2, (j) => b[j]);
    // The K vectors of the forward and backward search, indexed by diagonal (i1 - i2) + off.
    const ndiags = N1 + N2 + 3;
    const off = N2 + 1;
    const kf = new Int32Array(ndiags);
    const kb = new Int32Array(ndiags);
    let mxcost = Math.max(bogosqrt(ndiags), MAX_COST_MIN);
    let work = 0;
    let complete = true;
    /** The split point of the box, and whether each half must be searched minimally. */
    const split = (off1, lim1, off2, lim2, needMin) => {
        const dmin = off1 - lim2;
        const dmax = lim1 - off2;
        const fmid = off1 - off2;
        const bmid = lim1 - lim2;
        const odd = ((fmid - bmid) & 1) !== 0;
        let fmin = fmid;
        let fmax = fmid;
        let bmin = bmid;
        let bmax = bmid;
        kf[fmid + off] = off1;
        kb[bmid + off] = lim1;
        for (let ec = 1;; ec++) {
            let gotSnake = false;
            // Widen the forward diagonals by one (or narrow at the box's edge); the outer values are
            // set so the core loop needs no bounds checks.
            if (fmin > dmin)
                kf[--fmin - 1 + off] = -1;
            else
                ++fmin;
            if (fmax < dmax)
                kf[++fmax + 1 + off] = -1;
            else
                --fmax;
            for (let d = fmax; d >= fmin; d -= 2) {
                let i1 = kf[d - 1 + off] >= kf[d + 1 + off] ? kf[d - 1 + off] + 1 : kf[d + 1 + off];
                const prev = i1;
                let i2 = i1 - d;
                while (i1 < lim1 && i2 < lim2 && h1[i1] === h2[i2]) {
                    i1++;
                    i2++;
                }
                work += 1 + i1 - prev;
                if (i1 - prev > SNAKE_CNT)
                    gotSnake = true;
                kf[d + off] = i1;
                if (odd && bmin <= d && d <= bmax && kb[d + off] <= i1)
                    return [i1, i2, true, true];
            }
            if (bmin > dmin)
                kb[--bmin - 1 + off] = LINE_MAX;
            else
                ++bmin;
            if (bmax < dmax)
                kb[++bmax + 1 + off] = LINE_MAX;
            else
                --bmax;
            for (let d = bmax; d >= bmin; d -= 2) {
                let i1 = kb[d - 1 + off] < kb[d + 1 + off] ? kb[d - 1 + off] : kb[d + 1 + off] - 1;
                const prev = i1;
                let i2 = i1 - d;
                while (i1 > off1 && i2 > off2 && h1[i1 - 1] === h2[i2 - 1]) {
                    i1--;
                    i2--;
                }
                work += 1 + prev - i1;
                if (prev - i1 > SNAKE_CNT)
                    gotSnake = true;
                kb[d + off] = i1;
                if (!odd && fmin <= d && d <= fmax && i1 <= kf[d + off])
                    return [i1, i2, true, true];
            }
            if (needMin)
                continue;
            // Past the heuristic's threshold, with a long snake found: a diagonal far along (its reach
            // less its distance from the middle diagonal, above 4 × the cost) ending in a snake of at
            // least SNAKE_CNT lines is a good enough split.
            if (gotSnake && ec > Math.min(HEUR_MIN_COST, mxcost)) {
                let best = 0;
                let s1 = 0;
                let s2 = 0;
                for (let d = fmax; d >= fmin; d -= 2) {
                    const dd = d > fmid ? d - fmid : fmid - d;
                    const i1 = kf[d + off];
                    const i2 = i1 - d;
                    const v = i1 - off1 + (i2 - off2) - dd;
                    if (v > K_HEUR * ec && v > best && off1 + SNAKE_CNT <= i1 && i1 < lim1 && off2 + SNAKE_CNT <= i2 && i2 < lim2) {
                        for (let k = 1; h1[i1 - k] === h2[i2 - k]; k++) {
                            if (k === SNAKE_CNT) {
                                best = v;
                                s1 = i1;
                                s2 = i2;
                                break;
                            }
                        }
                    }
                }
                if (best > 0)
                    return [s1, s2, true, false];
                for (let d = bmax; d >= bmin; d -= 2) {
                    const dd = d > bmid ? d - bmid : bmid - d;
                    const i1 = kb[d + off];
                    const i2 = i1 - d;
                    const v = lim1 - i1 + (lim2 - i2) - dd;
                    if (v > K_HEUR * ec && v > best && off1 < i1 && i1 <= lim1 - SNAKE_CNT && off2 < i2 && i2 <= lim2 - SNAKE_CNT) {
                        for (let k = 0; h1[i1 + k] === h2[i2 + k]; k++) {
                            if (k === SNAKE_CNT - 1) {
                                best = v;
                                s1 = i1;
                                s2 = i2;
                                break;
                            }
                        }
                    }
                }
                if (best > 0)
                    return [s1, s2, false, true];
            }
            // Enough: the furthest-reaching path of either search (by i1 + i2) is the split.
            if (ec >= mxcost) {
                let fbest = -1;
                let fbest1 = -1;
                for (let d = fmax; d >= fmin; d -= 2) {
                    let i1 = Math.min(kf[d + off], lim1);
                    let i2 = i1 - d;
                    if (lim2 < i2) {
                        i1 = lim2 + d;
                        i2 = lim2;
                    }
                    if (fbest < i1 + i2) {
                        fbest = i1 + i2;
                        fbest1 = i1;
                    }
                }
                let bbest = LINE_MAX;
                let bbest1 = LINE_MAX;
                for (let d = bmax; d >= bmin; d -= 2) {
                    let i1 = Math.max(off1, kb[d + off]);
                    let i2 = i1 - d;
                    if (i2 < off2) {
                        i1 = off2 + d;
                        i2 = off2;
                    }
                    if (i1 + i2 < bbest) {
                        bbest = i1 + i2;
                        bbest1 = i1;
                    }
                }
                if (lim1 + lim2 - bbest < fbest - (off1 + off2))
                    return [fbest1, fbest - fbest1, true, false];
                return [bbest1, bbest - bbest1, false, true];
            }
        }
    };
    // Divide and conquer with an explicit stack (the order the boxes are done in changes nothing).
    const stack = [0, N1, 0, N2, 0];
    while (stack.length > 0) {
        const needMin = stack.pop() === 1;
        let lim2 = stack.pop();
        let off2 = stack.pop();
        let lim1 = stack.pop();
        let off1 = stack.pop();
        while (off1 < lim1 && off2 < lim2 && h1[off1] === h2[off2]) {
            off1++;
            off2++;
        }
        while (off1 < lim1 && off2 < lim2 && h1[lim1 - 1] === h2[lim2 - 1]) {
            lim1--;
            lim2--;
        }
        if (off1 === lim1 || off2 === lim2) {
            for (let i = off1; i < lim1; i++)
                removed[idx1[i]] = 1;
            for (let j = off2; j < lim2; j++)
                added[idx2[j]] = 1;
            continue;
        }
        if (complete && work > workLimit) {
            complete = false;
            mxcost = COARSE_COST;
        }
        const [s1, s2, minLo, minHi] = split(off1, lim1, off2, lim2, needMin && complete);
        stack.push(off1, s1, off2, s2, minLo ? 1 : 0, s1, lim1, s2, lim2, minHi ? 1 : 0);
    }
    return { removed, added, complete };
}
//# sourceMappingURL=line-diff.js.map