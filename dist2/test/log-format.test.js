// `cairn serve --log-format pretty` (lib/cli/log-format.ts, pino-pretty): one readable line per
// event with every field but pid/hostname/service, colours only on a terminal.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { prettyStream } from '../lib/cli/log-format.js';
function fakeStream(isTTY) {
    let text = '';
    const stream = Object.assign(new Writable({
        write(chunk, _enc, done) {
            text += chunk.toString('utf8');
            done();
        },
    }), { isTTY });
    return { stream, output: () => text };
}
/** pino-pretty hands lines on through a stream pipeline: wait until `done(text)` holds (bounded), never one look after a tick. */
async function untilWritten(output, done) {
    for (const deadline = Date.now() + 5000; !done(output());) {
        if (Date.now() > deadline)
            throw new Error(`the pretty stream did not write what was logged: ${JSON.stringify(output())}`);
        await new Promise((r) => setTimeout(r, 5));
    }
    return output();
}
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
async function logTo(isTTY) {
    const { stream, output } = fakeStream(isTTY);
    const log = pino({ level: 'info', base: { service: 'cairn' }, timestamp: () => ',"time":1700000001000' }, prettyStream(stream));
    log.info({ address: '127.0.0.1:8088', data: '/tmp/d ir' }, 'listening');
    log.warn({ repository_index: 3, note: 'x' }, 'recovery');
    log.debug({ hidden: true }, 'below the level');
    log.info({}, 'stopped');
    return (await untilWritten(output, (text) => text.split('\n').length > 3)).split('\n').filter((l) => l.length > 0);
}
describe('serve --log-format pretty (pino-pretty)', () => {
    it('off a terminal: one plain line per event, UTC time, level, message and every field but pid/hostname/service', async () => {
        const lines = await logTo(false);
        expect(lines).to.deep.equal([
            '[22:13:21] INFO: listening {"address":"127.0.0.1:8088","data":"/tmp/d ir"}',
            '[22:13:21] WARN: recovery {"repository_index":3,"note":"x"}',
            '[22:13:21] INFO: stopped',
        ]);
        for (const l of lines)
            expect(l).to.not.match(ANSI);
    });
    it('on a terminal: the same lines, coloured by level', async () => {
        const lines = await logTo(true);
        expect(lines.map((l) => l.replace(ANSI, ''))).to.deep.equal([
            '[22:13:21] INFO: listening {"address":"127.0.0.1:8088","data":"/tmp/d ir"}',
            '[22:13:21] WARN: recovery {"repository_index":3,"note":"x"}',
            '[22:13:21] INFO: stopped',
        ]);
        expect(lines[0]).to.include('\x1b[32mINFO'); // green
        expect(lines[1]).to.include('\x1b[33mWARN'); // yellow
    });
    it('an error event shows its message and stack under the line', async () => {
        const { stream, output } = fakeStream(false);
        const log = pino({ base: { service: 'cairn' } }, prettyStream(stream));
        log.error({ err: { name: 'Error', message: 'boom', stack: 'Error: boom\n    at here' }, method: 'GET' }, 'request failed');
        const text = await untilWritten(output, (t) => t.includes('at here') && t.endsWith('\n'));
        expect(text).to.match(/^\[\d\d:\d\d:\d\d\] ERROR: request failed \{"method":"GET"\}\n/);
        expect(text).to.include('"message": "boom"');
        expect(text).to.include('at here');
    });
});
//# sourceMappingURL=log-format.test.js.map