// Which archive manifests a prune keeps (storage-layout.md §20, docs/operations.md "Archive
// retention"): a retention policy as a small parsed value and one pure function from manifests,
// policy and the time now to keep/drop. No I/O.
//
// A policy is a list of rules, `all:48h,daily:30d`: `all:W` keeps every manifest captured in the
// last W; `hourly:W`, `daily:W`, `weekly:W` keep, among the manifests captured in the last W,
// the newest of each UTC hour, UTC day or ISO week (Monday to Sunday, UTC). A manifest is kept
// when any rule keeps it. Whatever the policy, the newest manifest of every repository (the
// greatest key, the one a restore picks) is kept, unless the repository is known to be purged:
// then its newest manifest is treated like the others and leaves when every window has passed.
import { Invalid } from './errors.js';
import { parseManifestKey } from './archive-manifest.js';
export const DEFAULT_RETENTION = 'all:48h,daily:30d';
export const DEFAULT_GRACE = '24h';
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
// A century: far beyond any retention, and far below the doubles' exact integers.
const MAX_DURATION_MS = 100 * 366 * 86_400_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** `90s`, `15m`, `48h`, `30d`, `8w` as milliseconds; `what` names the option in the error. */
export function parseDuration(text, what) {
    const m = /^([0-9]{1,12})([smhdw])$/.exec(text.trim());
    if (!m)
        throw new Invalid(`${what} must be a number and a unit (s, m, h, d or w), such as 24h or 30d; got ${JSON.stringify(text)}`);
    const ms = Number(m[1]) * UNIT_MS[m[2]];
    if (ms > MAX_DURATION_MS)
        throw new Invalid(`${what} must be at most 100 years`);
    return ms;
}
/** `all:48h,daily:30d` as a policy; Invalid names what is wrong. */
export function parseRetention(text, what = '--keep') {
    const rules = [];
    const parts = text.split(',').map((p) => p.trim());
    if (parts.length === 1 && parts[0] === '')
        throw new Invalid(`${what} needs at least one rule, such as ${DEFAULT_RETENTION}`);
    for (const part of parts) {
        const m = /^([a-z]+):(.*)$/.exec(part);
        if (!m)
            throw new Invalid(`${what}: ${JSON.stringify(part)} is not KIND:DURATION (such as ${DEFAULT_RETENTION})`);
        const kind = m[1];
        if (kind !== 'all' && kind !== 'hourly' && kind !== 'daily' && kind !== 'weekly') {
            throw new Invalid(`${what}: unknown rule ${JSON.stringify(kind)} (known: all, hourly, daily, weekly)`);
        }
        if (rules.some((r) => r.kind === kind))
            throw new Invalid(`${what}: the rule ${kind} is given twice`);
        rules.push({ kind, windowMs: parseDuration(m[2], `${what} ${kind}`) });
    }
    return rules;
}
/** The policy written back in its own syntax (for reports). */
export function formatRetention(policy) {
    return policy.map((r) => `${r.kind}:${formatDuration(r.windowMs)}`).join(',');
}
export function formatDuration(ms) {
    for (const unit of ['w', 'd', 'h', 'm']) {
        if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0)
            return `${ms / UNIT_MS[unit]}${unit}`;
    }
    return `${Math.floor(ms / 1000)}s`;
}
/** The bucket a manifest captured at `ms` falls in for a rule (UTC hour, day, ISO week). */
function bucketOf(kind, ms) {
    if (kind === 'hourly')
        return Math.floor(ms / HOUR_MS);
    const day = Math.floor(ms / DAY_MS);
    if (kind === 'daily')
        return day;
    // 1970-01-01 was a Thursday: day + 3 counts from the Monday before it.
    return Math.floor((day + 3) / 7);
}
/** Newer first: by captured time, then by key (the later generation wins a tie). */
function newer(a, b) {
    if (a.capturedAtUs !== b.capturedAtUs)
        return a.capturedAtUs > b.capturedAtUs;
    return a.key > b.key;
}
/**
 * Split manifests into keep and drop under `policy` at `nowMs`. Pure and idempotent: choosing
 * again among the kept manifests, at the same time, keeps them all. `purged` names repositories
 * whose newest manifest is not kept for being the newest.
 */
export function chooseManifests(manifests, policy, nowMs, purged = new Set()) {
    const byRepository = new Map();
    for (const m of manifests) {
        const parsed = parseManifestKey(m.key);
        if (!parsed)
            throw new Invalid(`${JSON.stringify(m.key)} is not a manifest key`);
        const list = byRepository.get(parsed.repository) ?? [];
        list.push(m);
        byRepository.set(parsed.repository, list);
    }
    const kept = new Set();
    for (const [repository, list] of byRepository) {
        if (!purged.has(repository)) {
            // The newest is the greatest key (§20.1): the manifest a restore of the newest state takes.
            kept.add(list.reduce((a, b) => (b.key > a.key ? b : a)).key);
        }
        for (const rule of policy) {
            const since = nowMs - rule.windowMs;
            const inside = list.filter((m) => Number(m.capturedAtUs / 1000n) >= since);
            if (rule.kind === 'all') {
                for (const m of inside)
                    kept.add(m.key);
                continue;
            }
            const newest = new Map();
            for (const m of inside) {
                const bucket = bucketOf(rule.kind, Number(m.capturedAtUs / 1000n));
                const held = newest.get(bucket);
                if (!held || newer(m, held))
                    newest.set(bucket, m);
            }
            for (const m of newest.values())
                kept.add(m.key);
        }
    }
    const keys = [...new Set(manifests.map((m) => m.key))].sort();
    return { keep: keys.filter((k) => kept.has(k)), drop: keys.filter((k) => !kept.has(k)) };
}
//# sourceMappingURL=archive-retention.js.map