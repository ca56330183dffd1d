// `cairn serve --log-format pretty`: pino's JSON lines rendered for a person at a terminal
// ("12:00:01 INFO  listening address=127.0.0.1:8088"). The default is pretty when stdout is a
// terminal and JSON otherwise, so log collectors keep getting one object per line.
import { Writable } from 'node:stream';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLORS: Record<number, string> = { 10: '90', 20: '90', 30: '32', 40: '33', 50: '31', 60: '35' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'service']);

export function prettyLine(line: string, color: boolean): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = Number(rec.level);
  const time = typeof rec.time === 'number' ? new Date(rec.time).toISOString().slice(11, 19) : '';
  const name = LEVELS[level] ?? String(rec.level);
  const tag = color ? `\x1b[${COLORS[level] ?? '0'}m${name}\x1b[0m` : name;
  const fields = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`);
  return `${time} ${tag} ${rec.msg ?? ''}${fields.length ? `  ${fields.join(' ')}` : ''}`;
}

export function prettyStream(out: NodeJS.WriteStream): Writable {
  let pending = '';
  const color = out.isTTY === true;
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      pending += chunk.toString('utf8');
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        out.write(`${prettyLine(pending.slice(0, nl), color)}\n`);
        pending = pending.slice(nl + 1);
      }
      done();
    },
  });
}
