// The transfer progress bar (lib/client/progress.ts, drawn by cli-progress) on a fake terminal:
// what it writes, in which units, and that it writes nothing off a terminal or with --quiet.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { formatBytes, progressFor } from '../lib/client/progress.js';
const MiB = 1024 * 1024;
/** A stderr stand-in: a terminal (or not) of the given width that keeps what is written. */
function fakeStream(isTTY, columns = 200) {
    let text = '';
    const w = new Writable({
        write(chunk, _enc, done) {
            text += chunk.toString('utf8');
            done();
        },
    });
    Object.assign(w, { isTTY, columns });
    return { stream: w, output: () => text };
}
/** The visible text of each redraw (cursor moves and line clears removed). */
function frames(raw) {
    // eslint-disable-next-line no-control-regex
    return raw.split(/\x1b\[1G/).map((f) => f.replace(/\x1b(?:\[[0-9;?]*[A-Za-z]|[78])/g, '')).filter((f) => f.length > 0);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
describe('transfer progress bar (cli-progress)', () => {
    it('formats sizes in binary units', () => {
        expect(formatBytes(0)).to.equal('0 B');
        expect(formatBytes(1023)).to.equal('1023 B');
        expect(formatBytes(1024)).to.equal('1.0 KiB');
        expect(formatBytes(300_000)).to.equal('293.0 KiB');
        expect(formatBytes(5 * MiB)).to.equal('5.0 MiB');
        expect(formatBytes(3 * 1024 * 1024 * 1024)).to.equal('3.0 GiB');
    });
    it('on a terminal: label, bar, percentage, done / total in binary units, rate and ETA; cleared when done', async () => {
        const { stream, output } = fakeStream(true);
        const p = progressFor(stream, true);
        p.start('push', 0);
        // Total still unknown (a push scanning): bytes and rate, no bar, percentage or ETA.
        const first = frames(output())[0];
        expect(first).to.match(/^push {2}0 B {2}0 B\/s$/);
        p.setTotal(20 * MiB);
        await sleep(150);
        p.increment(5 * MiB);
        await sleep(250); // a scheduled redraw (10 per second)
        const drawn = frames(output());
        const last = drawn[drawn.length - 1];
        expect(last).to.match(/^push {2}\[#{5}-{15}\] {2}25% {2}5\.0 MiB \/ 20\.0 MiB {2}\d+(\.\d)? (KiB|MiB)\/s {2}ETA \d+s$/);
        p.stop();
        // The line is cleared (erase-line) and the cursor put back at the start: no newline left.
        expect(output().endsWith('\x1b[1G\x1b[2K')).to.equal(true);
        expect(output()).to.not.include('\n');
        const before = output().length;
        await sleep(250);
        expect(output().length, 'no redraw after stop').to.equal(before);
    });
    it('the ETA follows the rate over the remaining bytes', async () => {
        const { stream, output } = fakeStream(true);
        const p = progressFor(stream, true);
        const started = Date.now();
        p.start('pull', 100 * MiB);
        for (let i = 0; i < 5; i++) {
            await sleep(110);
            p.increment(1 * MiB);
        }
        // 5 MiB in `elapsed`: the 95 MiB left take 19 times as long (~10 s on an idle machine).
        const expected = ((Date.now() - started) / 1000) * 19;
        await sleep(150);
        p.stop();
        const withEta = frames(output()).filter((f) => /ETA \d/.test(f));
        expect(withEta.length).to.be.greaterThan(0);
        const last = withEta[withEta.length - 1];
        expect(last).to.include('5.0 MiB / 100.0 MiB');
        const m = /ETA (?:(\d+)m)?(\d+)s$/.exec(last);
        expect(m, last).to.not.equal(null);
        const eta = Number(m[1] ?? 0) * 60 + Number(m[2]);
        expect(eta, last).to.be.within(expected * 0.5, expected * 3 + 2);
    });
    it('trims the line to the terminal width', async () => {
        const { stream, output } = fakeStream(true, 30);
        const p = progressFor(stream, true);
        p.start('pull', 10 * MiB);
        p.increment(MiB);
        p.stop();
        for (const f of frames(output()))
            expect(f.length).to.be.at.most(30);
        expect(frames(output())[0]).to.match(/^pull {2}\[/);
    });
    it('writes nothing when the stream is not a terminal, or when disabled (--quiet)', async () => {
        for (const [tty, enabled] of [[false, true], [true, false]]) {
            const { stream, output } = fakeStream(tty);
            const p = progressFor(stream, enabled);
            p.start('push', 10);
            p.setTotal(100);
            p.increment(50);
            await sleep(150);
            p.stop();
            expect(output(), `tty=${tty} enabled=${enabled}`).to.equal('');
        }
    });
});
//# sourceMappingURL=progress.test.js.map