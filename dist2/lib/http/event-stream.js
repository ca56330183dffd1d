export const EVENT_STREAM_MEDIA = 'text/event-stream';
/** The reconnection delay the stream asks of EventSource clients (ms). */
export const RETRY_MS = 2000;
/**
 * A socket that has not drained for this long (and at least four heartbeats) belongs to a
 * reader that stopped reading: it is disconnected even while its subscription is still
 * catching up (which buffers nothing, but holds one of the server's subscriber places).
 */
export const STALL_MS = 60_000;
export function eventStreamReply(sub, heartbeatMs) {
    return {
        mediaType: `${EVENT_STREAM_MEDIA}; charset=utf-8`,
        // No caching or proxy buffering; the connection ends with the stream (a shutdown that
        // closes the stream then finds no idle keep-alive connection left to wait for).
        headers: { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'close' },
        stream: (res) => pump(res, sub, heartbeatMs),
    };
}
async function pump(res, sub, heartbeatMs) {
    const clientGone = () => sub.close('client');
    res.once('close', clientGone);
    // A client that went while the request was routed (the global feed waits for repositories to
    // open) closed the connection before this listener: no 'close' is coming, so give the place back now.
    if (res.destroyed || !res.socket || res.socket.destroyed)
        sub.close('client');
    const heartbeat = setInterval(() => {
        // A reader that does not drain gets no more bytes, not even comments.
        if (!res.writableNeedDrain)
            res.write(': keepalive\n\n');
    }, heartbeatMs);
    try {
        res.write(`retry: ${RETRY_MS}\n\n`);
        for (;;) {
            const items = await sub.next();
            if (!items)
                break;
            let text = '';
            for (const item of items)
                text += `id: ${item.id}\nevent: ${item.type}\ndata: ${item.json}\n\n`;
            if (!res.write(text))
                await drained(res, sub, Math.max(STALL_MS, 4 * heartbeatMs));
        }
    }
    finally {
        clearInterval(heartbeat);
        res.off('close', clientGone);
        sub.close('client');
        // A reader that stopped reading (overflow, or a shutdown while its socket is full) is cut off:
        // ending would wait for it to read what is already buffered.
        if (sub.reason === 'overflow' || sub.reason === 'stalled' || res.writableNeedDrain)
            res.destroy();
        else
            res.end();
    }
}
/** Resolves when the socket drains, closes, or the subscription closes; after `stallMs` without, closes it ('stalled'). */
function drained(res, sub, stallMs) {
    return new Promise((resolve) => {
        let forget = () => { };
        const timer = setTimeout(() => sub.close('stalled'), stallMs);
        const done = () => {
            clearTimeout(timer);
            res.off('drain', done);
            res.off('close', done);
            forget();
            resolve();
        };
        res.on('drain', done);
        res.on('close', done);
        forget = sub.whenClosed(done);
    });
}
//# sourceMappingURL=event-stream.js.map