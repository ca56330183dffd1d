// A bound on transfers that stop making progress: a pull whose bytes stop arriving and whose
// writes stop finishing fails after this many seconds instead of waiting for ever (a server or
// network that went silent, or a lost wake-up in the client).
/** Seconds without progress before a pull (or a runner's job stage) gives up, by default. */
export const DEFAULT_STALL_SECONDS = 60;
/** The largest bound accepted (a day). */
const MAX_STALL_SECONDS = 86_400;
/** No progress for the bound: the message says how long, what was awaited and how to change it. */
export class StalledError extends Error {
    constructor(message) {
        super(message);
        this.name = 'StalledError';
    }
}
/** A --stall-seconds / CAIRN_STALL_SECONDS value, checked. */
export function parseStallSeconds(raw, what) {
    const n = Number(raw);
    if (!/^[1-9][0-9]*$/.test(raw.trim()) || n > MAX_STALL_SECONDS)
        throw new Error(`${what} must be a whole number of seconds from 1 to ${MAX_STALL_SECONDS}`);
    return n;
}
/** The bound for this process: CAIRN_STALL_SECONDS, else DEFAULT_STALL_SECONDS. */
export function stallSecondsFromEnv() {
    const raw = process.env.CAIRN_STALL_SECONDS;
    if (raw === undefined || raw === '')
        return DEFAULT_STALL_SECONDS;
    return parseStallSeconds(raw, 'CAIRN_STALL_SECONDS');
}
/**
 * Calls `onStall` once when `touch()` has not been called for `ms`. One timer, re-armed for
 * the remaining time when it fires early, so touching costs a clock read.
 */
export class StallWatch {
    ms;
    onStall;
    last = performance.now();
    timer = null;
    constructor(ms, onStall) {
        this.ms = ms;
        this.onStall = onStall;
        this.arm(ms);
    }
    touch() {
        this.last = performance.now();
    }
    stop() {
        if (this.timer)
            clearTimeout(this.timer);
        this.timer = null;
    }
    arm(ms) {
        this.timer = setTimeout(() => {
            const idle = performance.now() - this.last;
            if (idle >= this.ms) {
                this.timer = null;
                this.onStall();
            }
            else {
                this.arm(this.ms - idle);
            }
        }, Math.max(1, ms));
    }
}
//# sourceMappingURL=stall.js.map