// A webhook receiver on loopback for the sealing tests: it records each delivery and answers 200;
// signedWith checks a delivery's signature against a secret as docs/api.md tells receivers to.
import { createHmac } from 'node:crypto';
import http from 'node:http';
export async function receiver() {
    const received = [];
    const server = http.createServer((req, res) => {
        const chunks = [];
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => {
            received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
            res.writeHead(200).end('ok');
        });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${server.address().port}/hook`,
        received,
        close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    };
}
export const signedWith = (r, secret) => r.headers['x-cairn-signature'] === `sha256=${createHmac('sha256', secret).update(`${r.headers['x-cairn-timestamp']}.${r.body}`).digest('hex')}`;
//# sourceMappingURL=webhook-receiver.js.map