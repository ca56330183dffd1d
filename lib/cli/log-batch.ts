// Log lines gathered in front of pino's destination (sonic-boom) and handed to it in batches
// (serve: ~16 KB), in order. Why not sonic-boom's own `minLength`: its write() re-measures the byte length
// of the whole pending string on every line (Buffer.byteLength of its last buffer), so a line
// costs O(pending bytes); under load that was ~5 µs per request, the largest single cost of
// GET {repo}/lines after the socket write (issue 10). Here a line costs an array push and the
// join happens once per batch; sonic-boom still does the writing (async, EAGAIN, partial writes).

/** What the batch writes into: pino.destination()'s SonicBoom satisfies it. */
export interface LineSink {
  write(text: string): boolean;
  flushSync(): void;
}

export class LogLineBatch {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly sink: LineSink,
    /** UTF-16 units gathered before they are handed on (≈ bytes for the ASCII log lines). */
    private readonly batchChars = 4096,
  ) {}

  /** pino's stream interface: one serialized line (with its newline) per call. */
  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.flush();
    return true;
  }

  /** Hand what waits to the sink (it writes asynchronously). */
  flush(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sink.write(text);
  }

  /** Everything written so far reaches the file descriptor before this returns (exit paths). */
  flushSync(): void {
    this.flush();
    this.sink.flushSync();
  }
}
