// Pure comment-thread rules (lib/domain/workflow/comment-rules.ts): anchor, body and suggestion
// validation, reply and draft ownership, folding records into threads, and porting an anchor
// through the line diff between two versions of a file (unit cases and fast-check properties).
import { expect } from 'chai';
import fc from 'fast-check';
import { isCairnError } from '../lib/domain/errors.js';
import { applySuggestions, checkOwnDraft, discardedDraft, editedDraft, checkReplyTarget, commentId, foldThreads, MAX_COMMENT_BODY_CHARS, parseCommentId, portAnchor, portLineAnchors, requireAnchor, requireBody, requireResolution, requireSuggestion, splitLines, textLineCount, } from '../lib/domain/workflow/comment-rules.js';
const B = (s) => Buffer.from(s, 'utf8');
const at = (line, end_line = null, side = 'revision') => ({ kind: 'lines', path: 'f.txt', side, line, end_line });
const port = (a, before, after) => portLineAnchors([a], B(before), after === null ? null : B(after))[0];
const code = (fn) => {
    try {
        fn();
    }
    catch (err) {
        if (isCairnError(err))
            return `${err.code}: ${err.message}`;
        throw err;
    }
    return 'ok';
};
let seq = 0;
const comment = (o = {}) => {
    const n = ++seq;
    return {
        comment_id: commentId('change-1', n), change_id: 'change-1', sequence: n, patchset_id: 'change-1.ps-1', author: 'alice',
        anchor: at(1), in_reply_to: null, body: 'x', resolution: null, suggestion: null, published: true, created_at_s: n, updated_at_s: n, ...o,
    };
};
describe('comment rules: validation', () => {
    const files = (p, side) => (p === 'a.ts' ? (side === 'revision' ? 10 : 8) : p === 'new.ts' && side === 'revision' ? 3 : p === 'img.png' ? 'binary' : null);
    it('anchors: patchset, file, lines (side defaults to revision), a range; ids parse', () => {
        expect(requireAnchor({}, files)).to.deep.equal({ kind: 'patchset' });
        expect(requireAnchor({ path: 'new.ts' }, files)).to.deep.equal({ kind: 'file', path: 'new.ts' });
        expect(requireAnchor({ path: 'img.png' }, files)).to.deep.equal({ kind: 'file', path: 'img.png' });
        expect(requireAnchor({ path: 'a.ts', line: 10 }, files)).to.deep.equal({ kind: 'lines', path: 'a.ts', side: 'revision', line: 10, end_line: null });
        expect(requireAnchor({ path: 'a.ts', side: 'base', line: 2, end_line: 8 }, files)).to.deep.equal({ kind: 'lines', path: 'a.ts', side: 'base', line: 2, end_line: 8 });
        expect(requireAnchor({ path: 'a.ts', line: 4, end_line: 4 }, files)).to.deep.include({ end_line: null });
        expect(parseCommentId('change-3.comment-12')).to.deep.equal({ change_id: 'change-3', number: 12 });
        expect(parseCommentId('change-3.comment-0')).to.equal(null);
    });
    it('anchors: each broken rule is Invalid with its reason', () => {
        const cases = [
            [{ path: 'a.ts', line: 0 }, /line must be an integer of at least 1/],
            [{ path: 'a.ts', line: 1.5 }, /line must be an integer/],
            [{ path: 'a.ts', line: 5, end_line: 4 }, /end_line must be an integer not less than line/],
            [{ path: 'a.ts', line: 11 }, /line 11 is beyond the end of a.ts on the revision side \(10 lines\)/],
            [{ path: 'a.ts', side: 'base', line: 2, end_line: 9 }, /line 9 is beyond the end of a.ts on the base side \(8 lines\)/],
            [{ path: 'new.ts', side: 'base', line: 1 }, /path new.ts is not a file on the base side/],
            [{ path: 'img.png', line: 1 }, /not text/],
            [{ path: 'nope.ts' }, /path nope.ts is not a file of the patchset or its base/],
            [{ path: '../a.ts', line: 1 }, /path must be a clean relative path/],
            [{ path: 'a.ts', side: 'left', line: 1 }, /side must be one of base, revision/],
            [{ path: 'a.ts', end_line: 3 }, /end_line needs a line/],
            [{ line: 3 }, /need a path/],
        ];
        for (const [input, re] of cases)
            expect(code(() => requireAnchor(input, files)), JSON.stringify(input)).to.match(/^Invalid: /).and.match(re);
    });
    it('bodies: non-empty, capped, well-formed; a reply that only resolves may be empty', () => {
        expect(code(() => requireBody('  \n', { reply: false, resolution: null }))).to.equal('Invalid: body must be non-empty');
        expect(code(() => requireBody('', { reply: true, resolution: null }))).to.equal('Invalid: body must be non-empty');
        expect(code(() => requireBody('', { reply: false, resolution: 'resolved' }))).to.equal('Invalid: body must be non-empty');
        expect(requireBody('', { reply: true, resolution: 'resolved' })).to.equal('');
        expect(requireBody('x'.repeat(MAX_COMMENT_BODY_CHARS), { reply: false, resolution: null })).to.have.length(MAX_COMMENT_BODY_CHARS);
        expect(code(() => requireBody('x'.repeat(MAX_COMMENT_BODY_CHARS + 1), { reply: false, resolution: null }))).to.match(/^Invalid: body is longer than/);
        expect(code(() => requireBody('a\uD800', { reply: false, resolution: null }))).to.match(/^Invalid: body contains a lone surrogate/);
        expect(code(() => requireResolution('done'))).to.equal('Invalid: resolution must be resolved or unresolved');
        expect(requireResolution(undefined)).to.equal(null);
    });
    it('suggestions: only on a revision-side line range; capped; no NUL', () => {
        expect(requireSuggestion('const x = 1;\n', at(3, 4))).to.equal('const x = 1;\n');
        expect(requireSuggestion('', at(3))).to.equal('');
        expect(requireSuggestion(undefined, { kind: 'patchset' })).to.equal(null);
        for (const a of [at(3, null, 'base'), { kind: 'file', path: 'a.ts' }, { kind: 'patchset' }]) {
            expect(code(() => requireSuggestion('y', a))).to.match(/^Invalid: a suggestion replaces lines on the revision side/);
        }
        expect(code(() => requireSuggestion('x'.repeat(64 * 1024 + 1), at(1)))).to.match(/^Invalid: suggestion is longer than/);
        expect(code(() => requireSuggestion('a\u0000b', at(1)))).to.equal('Invalid: suggestion must be text (no NUL)');
    });
    it('replies: unknown or another author\'s draft → NotFound; another change or own draft → Invalid', () => {
        const pub = comment();
        const other = comment({ change_id: 'change-2', comment_id: 'change-2.comment-1' });
        const bobDraft = comment({ author: 'bob', published: false });
        expect(checkReplyTarget(pub, pub.comment_id, 'change-1', 'bob')).to.equal(pub);
        expect(code(() => checkReplyTarget(undefined, 'change-1.comment-99', 'change-1', 'bob'))).to.equal('NotFound: comment change-1.comment-99 not found');
        expect(code(() => checkReplyTarget(bobDraft, bobDraft.comment_id, 'change-1', 'alice'))).to.equal(`NotFound: comment ${bobDraft.comment_id} not found`);
        expect(code(() => checkReplyTarget(other, other.comment_id, 'change-1', 'bob'))).to.match(/^Invalid: comment change-2.comment-1 belongs to change-2, not change-1/);
        expect(code(() => checkReplyTarget(bobDraft, bobDraft.comment_id, 'change-1', 'bob'))).to.match(/^Invalid: .* is your unpublished draft/);
    });
    it('drafts: only the author edits or deletes; a published comment is not a draft', () => {
        const d = comment({ published: false });
        expect(checkOwnDraft(d, d.comment_id, 'alice')).to.equal(d);
        expect(code(() => checkOwnDraft(d, d.comment_id, 'bob'))).to.equal(`NotFound: draft ${d.comment_id} not found`);
        expect(code(() => checkOwnDraft(undefined, 'change-1.comment-99', 'bob'))).to.equal('NotFound: draft change-1.comment-99 not found');
        const p = comment();
        expect(code(() => checkOwnDraft(p, p.comment_id, 'alice'))).to.match(/^Conflict: comment .* is published/);
        expect(code(() => checkOwnDraft(p, p.comment_id, 'bob'))).to.match(/^Conflict: comment .* is published/);
        const gone = discardedDraft(d, 9);
        expect(gone).to.include({ comment_id: d.comment_id, sequence: d.sequence, body: '', suggestion: null, discarded: true, updated_at_s: 9 });
        expect(code(() => checkOwnDraft(gone, gone.comment_id, 'alice'))).to.equal(`NotFound: draft ${d.comment_id} not found`);
        expect(code(() => checkReplyTarget(gone, gone.comment_id, 'change-1', 'alice'))).to.equal(`NotFound: comment ${d.comment_id} not found`);
        expect(foldThreads([gone], 'alice').threads).to.deep.equal([]);
    });
    it('an edit of a draft is checked as a new comment is', () => {
        const d = comment({ published: false, anchor: at(2, 3) });
        expect(editedDraft(d, { body: 'new' }, 5)).to.include({ body: 'new', updated_at_s: 5, resolution: null, suggestion: null });
        expect(editedDraft(d, { suggestion: 'x\n' }, 5)).to.include({ body: d.body, suggestion: 'x\n' });
        expect(editedDraft({ ...d, suggestion: 'x' }, { suggestion: null }, 5).suggestion).to.equal(null);
        expect(editedDraft(d, { resolution: 'resolved' }, 5).resolution).to.equal('resolved');
        expect(code(() => editedDraft(d, {}, 5))).to.match(/^Invalid: send at least one of body/);
        expect(code(() => editedDraft(d, { body: ' ' }, 5))).to.equal('Invalid: body must be non-empty');
        expect(code(() => editedDraft(d, { resolution: 'done' }, 5))).to.match(/^Invalid: resolution must be/);
        expect(code(() => editedDraft({ ...d, anchor: { kind: 'file', path: 'a' } }, { suggestion: 'x' }, 5))).to.match(/^Invalid: a suggestion replaces lines/);
        const reply = comment({ published: false, in_reply_to: 'change-1.comment-1', resolution: 'resolved', body: '' });
        expect(code(() => editedDraft(reply, { suggestion: 'x' }, 5))).to.match(/^Invalid: a suggestion goes on a thread's first comment/);
        // A reply that stops resolving its thread needs a body again.
        expect(code(() => editedDraft(reply, { resolution: null }, 5))).to.equal('Invalid: body must be non-empty');
    });
});
describe('comment rules: threads', () => {
    it('folds roots and replies in sequence order; the last published reply that sets a resolution wins', () => {
        const r1 = comment();
        const r2 = comment({ anchor: { kind: 'file', path: 'b' } });
        const a = comment({ in_reply_to: r1.comment_id, author: 'bob', resolution: 'resolved' });
        const b = comment({ in_reply_to: a.comment_id, body: 'still here' }); // no resolution: stays resolved
        const c = comment({ in_reply_to: r2.comment_id, resolution: 'resolved' });
        const d = comment({ in_reply_to: c.comment_id, author: 'bob', resolution: 'unresolved' }); // reopened
        // Given out of order: the fold sorts by sequence.
        const f = foldThreads([d, b, r2, a, c, r1], null);
        expect(f.threads.map((t) => [t.thread_id, t.replies.map((r) => r.comment_id), t.resolution])).to.deep.equal([
            [r1.comment_id, [a.comment_id, b.comment_id], 'resolved'],
            [r2.comment_id, [c.comment_id, d.comment_id], 'unresolved'],
        ]);
        expect(f.unresolved).to.equal(1);
        expect(f.orphans).to.deep.equal([]);
    });
    it('drafts: seen only by their author, change no published state, and do not count as unresolved threads', () => {
        const root = comment({ author: 'alice' });
        const draftReply = comment({ in_reply_to: root.comment_id, author: 'bob', published: false, resolution: 'resolved' });
        const draftRoot = comment({ author: 'bob', published: false });
        const asAlice = foldThreads([root, draftReply, draftRoot], 'alice');
        expect(asAlice.threads.map((t) => t.thread_id)).to.deep.equal([root.comment_id]);
        expect(asAlice.threads[0].replies).to.deep.equal([]);
        const asBob = foldThreads([root, draftReply, draftRoot], 'bob');
        expect(asBob.threads.map((t) => [t.thread_id, t.draft, t.resolution, t.resolution_with_drafts])).to.deep.equal([
            [root.comment_id, false, 'unresolved', 'resolved'],
            [draftRoot.comment_id, true, 'unresolved', 'unresolved'],
        ]);
        expect(asBob.unresolved).to.equal(1);
        expect(foldThreads([root, draftReply, draftRoot], null).unresolved).to.equal(1);
    });
    it('a root may open resolved (an FYI); a reply to nothing visible is an orphan, not a thread', () => {
        const fyi = comment({ resolution: 'resolved' });
        const lost = comment({ in_reply_to: 'change-1.comment-9999' });
        const f = foldThreads([fyi, lost], null);
        expect(f.threads.map((t) => t.resolution)).to.deep.equal(['resolved']);
        expect(f.unresolved).to.equal(0);
        expect(f.orphans).to.deep.equal([lost.comment_id]);
    });
});
describe('comment rules: porting an anchor to a later patchset', () => {
    const file = (...lines) => lines.map((l) => `${l}\n`).join('');
    const base = file('a', 'b', 'c', 'd', 'e');
    it('insert above shifts down; delete above shifts up; same content stays', () => {
        expect(port(at(3), base, file('x', 'y', 'a', 'b', 'c', 'd', 'e'))).to.deep.equal({ outdated: false, anchor: at(5) });
        expect(port(at(3), base, file('a', 'c', 'd', 'e'))).to.deep.equal({ outdated: false, anchor: at(2) });
        expect(port(at(3), base, file('b', 'c', 'd', 'e'))).to.deep.equal({ outdated: false, anchor: at(2) });
        expect(port(at(3), base, base)).to.deep.equal({ outdated: false, anchor: at(3) });
    });
    it('an edit inside the range → outdated with the original anchor; an edit next to it ports', () => {
        expect(port(at(3), base, file('a', 'b', 'C', 'd', 'e'))).to.deep.equal({ outdated: true, reason: 'lines_changed', anchor: at(3) });
        expect(port(at(3), base, file('a', 'b', 'd', 'e'))).to.deep.equal({ outdated: true, reason: 'lines_changed', anchor: at(3) });
        expect(port(at(3), base, file('a', 'B', 'c', 'D', 'e'))).to.deep.equal({ outdated: false, anchor: at(3) });
        expect(port(at(3), base, file('a', 'b', 'x', 'c', 'y', 'd', 'e'))).to.deep.equal({ outdated: false, anchor: at(4) });
    });
    it('a range ports whole with its end, and is outdated by a change or an insertion anywhere inside it', () => {
        expect(port(at(2, 4), base, file('x', 'a', 'b', 'c', 'd', 'E'))).to.deep.equal({ outdated: false, anchor: at(3, 5) });
        expect(port(at(2, 4), base, file('a', 'b', 'c', 'D', 'e'))).to.deep.include({ outdated: true, reason: 'lines_changed' });
        expect(port(at(2, 4), base, file('a', 'b', 'c', 'new', 'd', 'e'))).to.deep.include({ outdated: true, reason: 'lines_changed' });
        expect(port(at(2, 4), base, file('a', 'new', 'b', 'c', 'd', 'new', 'e'))).to.deep.equal({ outdated: false, anchor: at(3, 5) });
    });
    it('end of file without a newline: edits above port it; a line added after it changes it (as the diff shows)', () => {
        const noNl = 'a\nb\nc';
        expect(textLineCount(noNl)).to.equal(3);
        expect(port(at(3), noNl, 'x\na\nb\nc')).to.deep.equal({ outdated: false, anchor: at(4) });
        expect(port(at(2), noNl, 'a\nb\nc\nd')).to.deep.equal({ outdated: false, anchor: at(2) });
        expect(port(at(3), noNl, 'a\nb\nc\nd')).to.deep.include({ outdated: true, reason: 'lines_changed' });
        expect(port(at(3), noNl, 'a\nb\nc\n')).to.deep.include({ outdated: true, reason: 'lines_changed' });
    });
    it('empty files, removed files, binary content and anchors beyond the file are outdated, never thrown', () => {
        expect(textLineCount('')).to.equal(0);
        expect(port(at(1), '', 'a\n')).to.deep.include({ outdated: true, reason: 'beyond_file' });
        expect(port(at(1), 'a\n', '')).to.deep.include({ outdated: true, reason: 'lines_changed' });
        expect(port(at(1), 'a\n', null)).to.deep.include({ outdated: true, reason: 'file_removed' });
        expect(port(at(1), 'a\n', 'a\n\u0000')).to.deep.include({ outdated: true, reason: 'no_line_diff' });
        expect(port(at(6), base, base)).to.deep.include({ outdated: true, reason: 'beyond_file' });
        expect(port(at(2, 9), base, file('x'))).to.deep.include({ outdated: true, reason: 'beyond_file' });
    });
    it('base-side anchors port the same way (through the base diff); file and patchset anchors', () => {
        expect(port(at(2, null, 'base'), base, file('z', 'a', 'b'))).to.deep.equal({ outdated: false, anchor: at(3, null, 'base') });
        expect(portAnchor({ kind: 'file', path: 'f.txt' }, B('a'), null)).to.deep.equal({ outdated: true, reason: 'file_removed', anchor: { kind: 'file', path: 'f.txt' } });
        expect(portAnchor({ kind: 'file', path: 'f.txt' }, B('a'), B('b'))).to.deep.equal({ outdated: false, anchor: { kind: 'file', path: 'f.txt' } });
        expect(portAnchor({ kind: 'patchset' }, null, null)).to.deep.equal({ outdated: false, anchor: { kind: 'patchset' } });
        expect(portAnchor(at(1), null, B('a'))).to.deep.include({ outdated: true, reason: 'beyond_file' });
    });
    it('many anchors on a large file share one diff (bounded: 20,000 lines, 2,000 anchors)', () => {
        const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}`);
        const after = [...lines];
        for (let i = 19_000; i >= 0; i -= 1000)
            after.splice(i, 0, `inserted ${i}`);
        const anchors = Array.from({ length: 2000 }, (_, i) => at(i * 10 + 1));
        const out = portLineAnchors(anchors, B(file(...lines)), B(file(...after)));
        out.forEach((p, i) => {
            expect(p.outdated).to.equal(false);
            expect(after[p.anchor.line - 1]).to.equal(lines[anchors[i].line - 1]);
        });
    });
});
describe('comment rules: applying suggestions', () => {
    it('replaces each range with its lines, by the given text\'s numbering, in any order; "" removes', () => {
        const f = 'a\nb\nc\nd\ne\n';
        expect(applySuggestions(f, [{ line: 2, end_line: 3, suggestion: 'B\nC\nC2' }])).to.equal('a\nB\nC\nC2\nd\ne\n');
        expect(applySuggestions(f, [{ line: 5, end_line: null, suggestion: 'E\n' }, { line: 1, end_line: null, suggestion: 'A' }])).to.equal('A\nb\nc\nd\nE\n');
        expect(applySuggestions(f, [{ line: 2, end_line: 4, suggestion: '' }])).to.equal('a\ne\n');
        expect(applySuggestions(f, [{ line: 1, end_line: 5, suggestion: '' }])).to.equal('');
        expect(applySuggestions(f, [{ line: 3, end_line: null, suggestion: '\n' }])).to.equal('a\nb\n\nd\ne\n');
    });
    it('a file without a final newline keeps it that way; outside or overlapping ranges are Invalid', () => {
        expect(applySuggestions('a\nb', [{ line: 2, end_line: null, suggestion: 'B\nC' }])).to.equal('a\nB\nC');
        expect(applySuggestions('a\nb', [{ line: 1, end_line: null, suggestion: 'A' }])).to.equal('A\nb');
        expect(code(() => applySuggestions('a\nb', [{ line: 3, end_line: null, suggestion: 'x' }]))).to.equal('Invalid: suggestion for lines 3..3 is outside the file (2 lines)');
        expect(code(() => applySuggestions('a\nb\nc', [{ line: 1, end_line: 2, suggestion: 'x' }, { line: 2, end_line: null, suggestion: 'y' }]))).to.match(/^Invalid: suggestions for lines 1..2 and 2..2 overlap/);
        expect(code(() => applySuggestions('a\nb\nc', [{ line: 2, end_line: 1, suggestion: 'x' }]))).to.match(/^Invalid: suggestion for lines 2..1 is outside/);
    });
    it('property: a suggestion of the lines it replaces changes nothing; a real one ports every anchor outside its range and outdates the range', () => {
        const lines = fc.uniqueArray(fc.stringMatching(/^[a-z ]{0,6}$/), { minLength: 1, maxLength: 25 });
        fc.assert(fc.property(lines, fc.boolean(), fc.nat(), fc.nat({ max: 3 }), fc.nat(), (ls, nl, start, len, probe) => {
            fc.pre(nl || ls[ls.length - 1] !== ''); // "a\n" + "" is one line, not two
            const text = ls.join('\n') + (nl ? '\n' : '');
            const l = 1 + (start % ls.length);
            const e = Math.min(ls.length, l + len);
            const same = ls.slice(l - 1, e).map((x) => `${x}\n`).join(''); // "" would remove: one empty line is "\n"
            expect(applySuggestions(text, [{ line: l, end_line: e, suggestion: same }])).to.equal(text);
            const after = applySuggestions(text, [{ line: l, end_line: e, suggestion: 'REPLACED\nREPLACED 2' }]);
            const p = 1 + (probe % ls.length);
            const r = port(at(p), text, after);
            const outside = p < l || p > e;
            // Without a final newline the last line changes when the lines around it do (as the diff shows).
            fc.pre(nl || !(p === ls.length || (e === ls.length && p === l - 1)));
            expect(r.outdated, JSON.stringify({ p, l, e, r })).to.equal(!outside);
            if (!r.outdated)
                expect(splitLines(after)[r.anchor.line - 1]).to.equal(ls[p - 1]);
        }), { numRuns: 400 });
    });
});
/** A file of distinct lines, an anchored range, and edits kept outside it (`touch` forces one inside). */
const scenario = (touch) => fc.record({
    n: fc.integer({ min: 1, max: 40 }),
    start: fc.nat(), len: fc.nat({ max: 5 }),
    trailingNewline: fc.boolean(),
    ops: fc.array(fc.constantFrom('keep', 'keep', 'keep', 'delete', 'modify'), { minLength: 46, maxLength: 46 }),
    inserts: fc.array(fc.nat({ max: 2 }), { minLength: 47, maxLength: 47 }),
    touchKind: fc.constantFrom('delete', 'modify', 'insert'), touchAt: fc.nat(),
}).map((s) => {
    const l = 1 + (s.start % s.n);
    const e = Math.min(s.n, l + s.len);
    const old = Array.from({ length: s.n }, (_, i) => `line ${i + 1}`);
    const out = [];
    let fresh = 0;
    const insert = (gap) => { for (let k = 0; k < s.inserts[gap]; k++)
        out.push({ orig: null, text: `new ${++fresh}` }); };
    for (let i = 1; i <= s.n; i++) {
        if (i <= l || i > e)
            insert(i); // no insertion between anchored lines
        const op = i >= l && i <= e ? 'keep' : s.ops[i];
        if (op === 'keep')
            out.push({ orig: i, text: old[i - 1] });
        else if (op === 'modify')
            out.push({ orig: null, text: `changed ${i}` });
    }
    insert(s.n + 1);
    let touched = false;
    if (touch) {
        const kind = s.touchKind === 'insert' && e === l ? 'modify' : s.touchKind;
        if (kind === 'insert') {
            const before = l + 1 + (s.touchAt % (e - l)); // an old line of l+1..e
            out.splice(out.findIndex((x) => x.orig === before), 0, { orig: null, text: 'inside' });
        }
        else {
            const victim = out.findIndex((x) => x.orig === l + (s.touchAt % (e - l + 1)));
            if (kind === 'delete')
                out.splice(victim, 1);
            else
                out[victim] = { orig: null, text: 'edited' };
        }
        touched = true;
    }
    const text = (ls) => (ls.length === 0 ? '' : ls.join('\n') + (s.trailingNewline ? '\n' : ''));
    return { l, e, old, out, touched, before: text(old), after: text(out.map((x) => x.text)), trailingNewline: s.trailingNewline, n: s.n };
});
describe('comment rules: porting properties', () => {
    it('edits that leave the anchored lines alone port them to the same lines (distinct lines)', () => {
        fc.assert(fc.property(scenario(false), (s) => {
            // Without a final newline, the file's last line gains or loses one when lines after it come
            // or go: the diff shows that line as changed, so such cases are not "untouched".
            const lastOld = s.e === s.n;
            const lastNew = s.out.length > 0 && s.out[s.out.length - 1].orig === s.e;
            fc.pre(s.trailingNewline || lastOld === lastNew);
            const r = port(at(s.l, s.e === s.l ? null : s.e), s.before, s.after);
            expect(r.outdated, JSON.stringify(r)).to.equal(false);
            const a = r.anchor;
            expect(a.line).to.equal(s.out.findIndex((x) => x.orig === s.l) + 1);
            for (let k = 0; k <= s.e - s.l; k++)
                expect(s.out[a.line - 1 + k].text).to.equal(s.old[s.l - 1 + k]);
        }), { numRuns: 400 });
    });
    it('an edit touching the anchored lines (changed, removed, or a line inserted inside) is outdated', () => {
        fc.assert(fc.property(scenario(true), (s) => {
            const anchor = at(s.l, s.e === s.l ? null : s.e);
            expect(port(anchor, s.before, s.after)).to.deep.equal({ outdated: true, reason: 'lines_changed', anchor });
        }), { numRuns: 400 });
    });
    it('any two files (repeated lines too): a ported range is within the new file and its lines read the same', () => {
        const lines = fc.array(fc.constantFrom('a', 'b', 'c', '', '  x'), { maxLength: 30 });
        fc.assert(fc.property(lines, lines, fc.boolean(), fc.boolean(), fc.nat(), fc.nat({ max: 4 }), (o, n, nlO, nlN, start, len) => {
            fc.pre(o.length > 0);
            const l = 1 + (start % o.length);
            const e = Math.min(o.length, l + len);
            const text = (ls, nl) => (ls.length === 0 ? '' : ls.join('\n') + (nl ? '\n' : ''));
            const after = text(n, nlN);
            const r = port(at(l, e === l ? null : e), text(o, nlO), after);
            if (r.outdated)
                return;
            const a = r.anchor;
            const end = a.end_line ?? a.line;
            expect(end - a.line).to.equal(e - l);
            expect(a.line).to.be.at.least(1);
            expect(end).to.be.at.most(textLineCount(after));
            for (let k = 0; k <= e - l; k++)
                expect(n[a.line - 1 + k]).to.equal(o[l - 1 + k]);
        }), { numRuns: 1000 });
    });
});
//# sourceMappingURL=comments-domain.test.js.map