import { expect } from 'chai';
import { Conflict } from '../lib/domain/errors.js';
import { admit } from '../lib/http/app.js';
import { ROUTES } from '../lib/http/routes.js';
const record = (lifecycle) => ({
    repository_index: 3, repository_name: 'r', lifecycle_kind: lifecycle, namespace: '', policy_flags: 0, created_at_s: 0, updated_at_s: 0, tombstoned: lifecycle === 3,
});
const op = (name) => ROUTES.find((r) => r.operation === name);
describe('repository lifecycle admission', () => {
    const keptWhileRetiring = ['retirement.start', 'retirement.purge', 'retirement.abort', 'workerJobs.claim', 'workerJobs.heartbeat', 'workerJobs.complete', 'workerJobs.fail'];
    it('admits every mutation on an active repository', () => {
        for (const r of ROUTES.filter((x) => x.template.includes('{repository_index}')))
            expect(() => admit(r, r.method, record(1))).to.not.throw();
    });
    it('always admits GET and HEAD, whatever the lifecycle', () => {
        for (const lifecycle of [2, 3]) {
            expect(() => admit(op('lines.list'), 'GET', record(lifecycle))).to.not.throw();
            expect(() => admit(op('repositories.get'), 'HEAD', record(lifecycle))).to.not.throw();
        }
    });
    it('keeps retirement and the four worker-job actions while retiring and rejects every other mutation with 409', () => {
        const mutations = ROUTES.filter((r) => r.template.includes('{repository_index}') && r.method !== 'GET');
        expect(mutations.filter((r) => !r.extension).length).to.equal(37); // the spec's; extension mutations (webhooks) follow the same rule
        for (const r of mutations) {
            if (keptWhileRetiring.includes(r.operation))
                expect(() => admit(r, r.method, record(2)), r.operation).to.not.throw();
            else
                expect(() => admit(r, r.method, record(2)), r.operation).to.throw(Conflict, /retiring/);
        }
    });
    it('rejects worker-job actions and ordinary mutations on a purged repository', () => {
        expect(() => admit(op('workerJobs.complete'), 'POST', record(3))).to.throw(Conflict, /purged/);
        expect(() => admit(op('lines.put'), 'PUT', record(3))).to.throw(Conflict, /purged/);
        // Purge replay and abort reach their handlers, which apply the purged rules themselves.
        expect(() => admit(op('retirement.purge'), 'POST', record(3))).to.not.throw();
    });
});
//# sourceMappingURL=admission.test.js.map