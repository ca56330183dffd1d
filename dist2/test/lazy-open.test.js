import { expect } from 'chai';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { Authority } from '../lib/authority/authority.js';
import { CairnService } from '../lib/authority/service.js';
import { api, startTestServer, tempDir } from './helpers.js';
const REPOSITORIES = 40;
const R = (repo) => `/v1/native/repository-authorities/${repo}`;
/** A data directory of REPOSITORIES repositories, each with one task; repository 33 has a queued worker job. */
async function manyRepositories() {
    const dataDir = path.join(tempDir(), 'data');
    const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
    try {
        for (let i = 0; i < REPOSITORIES; i++) {
            const { record } = await service.register(`many-${i}`, '', 0);
            const a = await service.opened(record.repository_index);
            await a.workflow.createTask({ title: `Task of repository ${i}`, intent: 'i' });
            if (i === 33)
                await a.jobs.enqueue(7, { trigger: 'lazy-open test' });
        }
    }
    finally {
        service.close();
    }
    return dataDir;
}
/** Count Authority.open calls per repository index while `fn` runs. */
async function countingOpens(fn) {
    const original = Authority.open;
    const opens = new Map();
    Authority.open = (root, index, ...rest) => {
        opens.set(index, (opens.get(index) ?? 0) + 1);
        return original.call(Authority, root, index, ...rest);
    };
    try {
        return await fn(opens);
    }
    finally {
        Authority.open = original;
    }
}
describe('lazy repository opening', () => {
    let dataDir;
    before(async () => {
        dataDir = await manyRepositories();
    });
    it('opens the data directory without opening a repository; a repository opens on first use', async () => {
        const service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }) });
        try {
            for (let i = 0; i < REPOSITORIES; i++)
                expect(service.isOpen(i), `repository ${i}`).to.equal(false);
            expect(service.listed()).to.have.length(REPOSITORIES); // discovery answers from the registry
            const a = await service.opened(7);
            expect(a.workflow.task('task-1').title).to.equal('Task of repository 7');
            expect([...Array(REPOSITORIES).keys()].filter((i) => service.isOpen(i))).to.deep.equal([7]);
        }
        finally {
            service.close();
        }
    });
    it('serves at once; every repository answers its first request; concurrent first requests open it once', async () => {
        await countingOpens(async (opens) => {
            const s = await startTestServer(dataDir);
            try {
                expect((await api(s.url, 'GET', '/healthz')).status).to.equal(200);
                const list = await api(s.url, 'GET', '/v1/native/repository-authorities');
                expect(list.json.repositories).to.have.length(REPOSITORIES);
                // Ten concurrent first requests to each of the last repositories (the background pass opens in index order).
                const last = [REPOSITORIES - 1, REPOSITORIES - 2, REPOSITORIES - 3];
                const answers = await Promise.all(last.flatMap((repo) => Array.from({ length: 10 }, () => api(s.url, 'GET', `${R(repo)}/tasks/task-1`).then((res) => ({ repo, res })))));
                for (const { repo, res } of answers) {
                    expect(res.status, res.text).to.equal(200);
                    expect(res.json.task.title).to.equal(`Task of repository ${repo}`);
                }
                const service = await s.ready;
                await service.openAllInBackground();
                for (let i = 0; i < REPOSITORIES; i++) {
                    expect(service.isOpen(i), `repository ${i}`).to.equal(true);
                    expect(opens.get(i), `opens of repository ${i}`).to.equal(1);
                }
                for (const repo of [0, 20])
                    expect((await api(s.url, 'GET', `${R(repo)}/tasks/task-1`)).json.task.title).to.equal(`Task of repository ${repo}`);
            }
            finally {
                await s.stop();
            }
        });
    });
    it('claim-next across repositories finds a queued job in a repository no request has opened', async () => {
        const s = await startTestServer(dataDir);
        try {
            const res = await api(s.url, 'POST', '/v1/native/worker-jobs:claim', {
                json: { accepted_job_kinds: [7], repository_indexes: [], accepted_runtime_contracts: ['svc.runner.native-job.v3'] },
            });
            expect(res.status, res.text).to.equal(200);
            expect(res.json.claimed_job).to.include({ repository_index: 33, worker_job_index: 0 });
        }
        finally {
            await s.stop();
        }
    });
    it('reports a repository damaged on disk on its first use, as at startup, and serves the others', async () => {
        const damaged = path.join(tempDir(), 'data');
        await fsp.cp(dataDir, damaged, { recursive: true });
        const identity = path.join(damaged, 'repositories/5/authority.bin');
        const bytes = await fsp.readFile(identity);
        bytes[13] ^= 0x01;
        await fsp.writeFile(identity, bytes);
        await countingOpens(async (opens) => {
            const s = await startTestServer(damaged);
            try {
                expect((await api(s.url, 'GET', '/healthz')).status).to.equal(200);
                expect((await api(s.url, 'GET', R(5))).status).to.equal(200); // the registry record still reads
                const answers = await Promise.all(Array.from({ length: 5 }, () => api(s.url, 'GET', `${R(5)}/lines`)));
                for (const res of answers) {
                    expect(res.status, res.text).to.equal(500);
                    expect(res.json.error).to.equal(answers[0].json.error).and.not.include(damaged);
                }
                expect(opens.get(5)).to.equal(1);
                expect((await api(s.url, 'GET', `${R(6)}/tasks/task-1`)).status).to.equal(200);
                expect(await fsp.readFile(identity)).to.deep.equal(bytes); // reported, never rewritten
            }
            finally {
                await s.stop();
            }
        });
    });
});
//# sourceMappingURL=lazy-open.test.js.map