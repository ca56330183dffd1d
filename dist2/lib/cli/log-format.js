// `cairn serve --log-format pretty`: pino's JSON lines rendered by pino-pretty for a person at a
// terminal, one line per event: `[12:00:01] INFO: listening {"address":"127.0.0.1:8088",...}`
// (UTC time, level, message, then every other field of the event). pid, hostname and the
// constant `service` are left out. Colours only when the output is a terminal. The default
// format is pretty when stdout is a terminal and JSON otherwise, so log collectors keep getting
// one object per line (see ./serve.ts).
import pinoPretty from 'pino-pretty';
export function prettyStream(out) {
    return pinoPretty({
        destination: out,
        colorize: out.isTTY === true,
        translateTime: 'UTC:HH:MM:ss',
        ignore: 'pid,hostname,service',
        singleLine: true,
    });
}
//# sourceMappingURL=log-format.js.map