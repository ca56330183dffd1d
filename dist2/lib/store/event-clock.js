// The event clock: one process-wide source of commit times for events (storage-layout.md §18).
// Every batch that carries events takes a time strictly greater than any time taken before, in
// any repository, so the time of a batch orders it among all repositories' events; the global
// feed uses that order and, to never hand out an event ahead of one that will sort before it,
// holds events back while an earlier-timed batch is still being written (the low-water mark).
let last = 0;
const inFlight = new Set();
const listeners = new Set();
/** Raise the clock to at least `atUs` (the newest event time of a repository, read at open). */
export function observeEventTime(atUs) {
    if (atUs > last)
        last = atUs;
}
/** A fresh commit time (µs since the epoch) for a batch about to be written; call `endEventTime` after. */
export function beginEventTime() {
    const now = Date.now() * 1000;
    last = now > last ? now : last + 1;
    inFlight.add(last);
    return last;
}
/** The batch written at `atUs` is published or failed: later-timed events may now be delivered. */
export function endEventTime(atUs) {
    if (!inFlight.delete(atUs))
        return;
    for (const fn of listeners)
        fn();
}
/** The newest time handed out or observed (0: none yet): no event is timed after it. */
export function lastEventTime() {
    return last;
}
/**
 * Every event with a time below this is published or will never exist: the times of batches
 * still being written, or the next time the clock can hand out.
 */
export function eventLowWater() {
    let low = last + 1;
    for (const t of inFlight)
        if (t < low)
            low = t;
    return low;
}
/** Call `fn` whenever a batch leaves the in-flight set; returns the unsubscribe function. */
export function onEventTimeSettled(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
}
//# sourceMappingURL=event-clock.js.map