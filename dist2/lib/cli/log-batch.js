// Log lines gathered in front of pino's destination (sonic-boom) and handed to it in batches
// (serve: ~16 KB), in order. Why not sonic-boom's own `minLength`: its write() re-measures the byte length
// of the whole pending string on every line (Buffer.byteLength of its last buffer), so a line
// costs O(pending bytes); under load that was ~5 µs per request, the largest single cost of
// GET {repo}/lines after the socket write. Here a line costs an array push and the
// join happens once per batch; sonic-boom still does the writing (async, EAGAIN, partial writes).
import { writeSync } from 'node:fs';
/** Wait this long when a non-blocking descriptor is full (the reader is behind). */
const FULL_PIPE_WAIT_MS = 1;
/** Write all of `text` to `fd` now: partial writes resume, a full pipe (EAGAIN) is waited out. */
export function writeAllSync(fd, text) {
    let bytes = Buffer.from(text, 'utf8');
    while (bytes.length > 0) {
        try {
            bytes = bytes.subarray(writeSync(fd, bytes));
        }
        catch (err) {
            if (err.code !== 'EAGAIN')
                throw err;
            Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, FULL_PIPE_WAIT_MS);
        }
    }
}
/** A SonicBoom on `fd` as a LineSink. */
export function sinkOnFd(boom, fd) {
    return {
        write: (text) => boom.write(text),
        flushSync: () => boom.flushSync(),
        writeSync: (text) => {
            boom.flushSync();
            writeAllSync(fd, text);
        },
    };
}
export class LogLineBatch {
    sink;
    batchChars;
    lines = [];
    chars = 0;
    constructor(sink, 
    /** UTF-16 units gathered before they are handed on (≈ bytes for the ASCII log lines). */
    batchChars = 4096) {
        this.sink = sink;
        this.batchChars = batchChars;
    }
    /** pino's stream interface: one serialized line (with its newline) per call. */
    write(line) {
        this.lines.push(line);
        this.chars += line.length;
        if (this.chars >= this.batchChars)
            this.flush();
        return true;
    }
    /** Hand what waits to the sink (it writes asynchronously). */
    flush() {
        if (this.lines.length === 0)
            return;
        this.sink.write(this.take());
    }
    /**
     * Everything written so far reaches the file descriptor before this returns (exit paths).
     * Not through flush(): that starts an asynchronous write, which a process in its 'exit'
     * handler never finishes (a loaded machine lost every line of a short-lived server so).
     */
    flushSync() {
        const text = this.take();
        if (text)
            this.sink.writeSync(text);
        else
            this.sink.flushSync();
    }
    take() {
        const text = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
        this.lines = [];
        this.chars = 0;
        return text;
    }
}
//# sourceMappingURL=log-batch.js.map