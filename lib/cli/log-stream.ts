// The server log's destination: pino hands it one JSON line per call; the lines of one turn of
// the event loop are joined and written with a single write(2) at its end (setImmediate), in
// order, and whatever waits is written synchronously on exit. Under load a turn serves many
// requests, so the log costs one system call per turn instead of one per request; when idle a
// line is written at once. No line and no field is dropped.
import { writeSync } from 'node:fs';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export class BatchedLogStream {
  private pending: string[] = [];
  private scheduled = false;

  constructor(private readonly fd = 1) {
    process.on('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flushSync());
    }
    return true;
  }

  flushSync(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const bytes = Buffer.from(this.pending.length === 1 ? this.pending[0] : this.pending.join(''), 'utf8');
    this.pending = [];
    let at = 0;
    while (at < bytes.length) {
      try {
        at += writeSync(this.fd, bytes, at, bytes.length - at);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') {
          Atomics.wait(sleeper, 0, 0, 1); // a non-blocking pipe is full: wait for the reader
          continue;
        }
        if (code === 'EPIPE') return; // nobody reads the log any more
        throw err;
      }
    }
  }
}
