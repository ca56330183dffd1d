import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { api, register, startTestServer } from './helpers.js';
describe('recovery at open', () => {
    it('removes leftover temp files and unregistered repository directories', async () => {
        let server = await startTestServer();
        await register(server.url, 'kept');
        await server.stop();
        const data = server.dataDir;
        await fsp.writeFile(path.join(data, '.registry.bin.tmp-0123456789abcdef'), 'half a registry');
        await fsp.writeFile(path.join(data, 'repositories/0/.authority.bin.tmp-00000000000000aa'), 'torn');
        await fsp.mkdir(path.join(data, 'repositories/1'));
        await fsp.writeFile(path.join(data, 'repositories/1/authority.bin'), 'never acknowledged');
        server = await startTestServer(data);
        try {
            expect(await fsp.readdir(data)).to.not.include('.registry.bin.tmp-0123456789abcdef');
            // A repository's own temp files go when it opens: on first use, or in the background pass.
            await (await server.ready).openAllInBackground();
            expect(await fsp.readdir(path.join(data, 'repositories/0'))).to.not.include('.authority.bin.tmp-00000000000000aa');
            expect(await fsp.readdir(path.join(data, 'repositories'))).to.deep.equal(['0']);
            expect((await api(server.url, 'GET', '/v1/native/repository-authorities/0')).status).to.equal(200);
            // The next registration reuses index 1 cleanly.
            expect(await register(server.url, 'next')).to.equal(1);
        }
        finally {
            await server.stop();
        }
    });
    it('reports a corrupt authority without serving it, and keeps serving the others', async () => {
        let server = await startTestServer();
        await register(server.url, 'broken');
        await register(server.url, 'healthy');
        await server.stop();
        const identity = path.join(server.dataDir, 'repositories/0/authority.bin');
        const bytes = await fsp.readFile(identity);
        bytes[13] ^= 0x01;
        await fsp.writeFile(identity, bytes);
        server = await startTestServer(server.dataDir);
        try {
            expect((await api(server.url, 'GET', '/v1/native/repository-authorities/1')).status).to.equal(200);
            const broken = await api(server.url, 'GET', '/v1/native/repository-authorities/0/lines');
            expect(broken.status).to.equal(500);
            expect(broken.json.error).to.not.include(server.dataDir);
            expect(await fsp.readFile(identity)).to.deep.equal(bytes); // reported, never rewritten or dropped
        }
        finally {
            await server.stop();
        }
    });
    it('refuses to start on a corrupt registry instead of dropping records', async () => {
        let server = await startTestServer();
        await register(server.url, 'one');
        await server.stop();
        const file = path.join(server.dataDir, 'registry.bin');
        const bytes = await fsp.readFile(file);
        bytes[bytes.length - 1] ^= 0xff;
        await fsp.writeFile(file, bytes);
        server = await startTestServer(server.dataDir, { activationDelayMs: 1 });
        await server.ready.then(() => expect.fail('opened a corrupt registry'), (err) => expect(String(err)).to.match(/checksum/));
        expect(await server.done).to.equal(5);
        expect(await fsp.readFile(file)).to.deep.equal(bytes);
    });
});
//# sourceMappingURL=recovery.test.js.map