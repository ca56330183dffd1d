// Git mirror registrations and their state (docs/git.md "Mirror"): workflow entities written
// through the authority's transactions (storage-layout.md §17), so a registration, and what the
// last push found, are durable, exported with the repository and replayed at open. This module
// owns the records; lib/authority/git-mirror-runner.ts decides when to push and writes what it
// found through `recordAttempt`.
import { Conflict, Invalid, NotFound } from '../domain/errors.js';
import { gitRefProblem } from '../domain/git.js';
import { GIT_MIRROR, MAX_MIRRORS, mirrorId, grantRefusal, validateCredentialName, validateMirrorUrl, } from '../domain/git-mirrors.js';
import { validateLineName } from '../domain/lines.js';
import { nowSeconds } from '../domain/repository.js';
import { localAddresses } from './local-addresses.js';
const NEW_MIRROR = 'git_mirror:new';
export class GitMirrorBook {
    store;
    /** Every registration ever made (removed ones too), by id. */
    mirrors = new Map();
    /** Called after a commit that gives a mirror something to do (registration, resume). */
    onChange = () => { };
    constructor(store) {
        this.store = store;
        for (const [, m] of store.entitiesOf(GIT_MIRROR))
            this.mirrors.set(m.mirror_id, m);
    }
    /** Live mirrors in sequence order. */
    live() {
        return [...this.mirrors.values()].filter((m) => !m.removed).sort((a, b) => a.sequence - b.sequence);
    }
    /** A live mirror; 404 otherwise. */
    mirror(id) {
        const m = this.mirrors.get(id);
        if (!m || m.removed)
            throw new NotFound(`git mirror ${id} does not exist`);
        return m;
    }
    /** A live mirror or null (the runner's view). */
    current(id) {
        const m = this.mirrors.get(id);
        return m && !m.removed ? m : null;
    }
    /**
     * Register a mirror of `input.line` to `input.url`. The line must exist, be open and be a valid
     * git branch name; one mirror per (line, URL). `targets`: where mirrors may push; `grants`:
     * the operator's credential grants, of which `input.credential` must name one open to
     * repository `repositoryIndex` and the URL's host.
     */
    register(input, targets, grants, repositoryIndex) {
        validateLineName(input.line);
        const problem = gitRefProblem(input.line);
        if (problem)
            throw new Invalid(`line ${input.line} cannot be a git branch name: ${problem}`);
        const url = validateMirrorUrl(input.url, targets, localAddresses());
        const credential = validateCredentialName(input.credential);
        const refused = credential === null ? null : grantRefusal(grants, credential, repositoryIndex, url);
        if (refused)
            throw new Invalid(refused);
        return this.store.transact((tx) => {
            const line = tx.line(input.line);
            if (!line)
                throw new NotFound(`line ${input.line} does not exist`);
            if (line.status === 'archived')
                throw new Conflict(`line ${input.line} is archived; an archived line is not mirrored`);
            const staged = tx.stagedKeys(NEW_MIRROR);
            const twin = this.live().find((m) => m.line === input.line && m.url === url);
            if (twin)
                throw new Conflict(`line ${input.line} is mirrored to that URL already as ${twin.mirror_id}`);
            if (this.live().length + staged.length >= MAX_MIRRORS)
                throw new Conflict(`a repository has at most ${MAX_MIRRORS} git mirrors; remove one first`);
            const sequence = this.mirrors.size + staged.length + 1;
            const now = nowSeconds();
            const m = {
                mirror_id: mirrorId(sequence), sequence, version: 1, line: input.line, url, credential, state: 'pending',
                last_pushed_commit_id: null, last_pushed_at_s: null, last_error: null, failures: 0, next_attempt_at_ms: null,
                diverged_remote_commit_id: null, diverged_at_s: null, removed: false, created_at_s: now, updated_at_s: now, removed_at_s: null,
            };
            tx.stage(NEW_MIRROR, m.mirror_id, true);
            tx.upsert(GIT_MIRROR, m.mirror_id, m);
            tx.onPublish(() => this.mirrors.set(m.mirror_id, m));
            return m;
        }).then((m) => {
            this.onChange(m.mirror_id);
            return m;
        });
    }
    /** Remove a mirror: it stops (a push under way finishes, its result is not recorded) and its credential reference is erased. */
    remove(id) {
        this.mirror(id);
        return this.store.transact((tx) => {
            const cur = tx.entity(GIT_MIRROR, id);
            if (!cur || cur.removed)
                throw new NotFound(`git mirror ${id} does not exist`);
            const now = nowSeconds();
            const gone = { ...cur, version: cur.version + 1, credential: null, removed: true, next_attempt_at_ms: null, updated_at_s: now, removed_at_s: now };
            tx.upsert(GIT_MIRROR, id, gone);
            tx.onPublish(() => this.mirrors.set(id, gone));
            return gone;
        });
    }
    /**
     * Resume a mirror: forget what it knew of the remote, so the next push starts as a first push
     * (the remote's branch absent, or at one of the line's commits, is pushed to; anything else
     * diverges again). For a diverged mirror after the remote was put right, or a retrying one now.
     */
    resume(id) {
        this.mirror(id);
        return this.store.transact((tx) => {
            const cur = tx.entity(GIT_MIRROR, id);
            if (!cur || cur.removed)
                throw new NotFound(`git mirror ${id} does not exist`);
            const next = {
                ...cur, version: cur.version + 1, state: 'pending', last_pushed_commit_id: null, failures: 0, next_attempt_at_ms: null,
                diverged_remote_commit_id: null, diverged_at_s: null, updated_at_s: nowSeconds(),
            };
            tx.upsert(GIT_MIRROR, id, next);
            tx.onPublish(() => this.mirrors.set(id, next));
            return next;
        }).then((m) => {
            this.onChange(m.mirror_id);
            return m;
        });
    }
    /**
     * Record what an attempt found, unless the mirror changed meanwhile (removed, resumed: `seen`
     * is the record the attempt started from). A divergence writes `git_mirror.diverged` in the
     * same commit. Nothing is written while the repository is not active (`admitted`).
     */
    recordAttempt(seen, outcome, admitted) {
        const id = seen.mirror_id;
        return this.store.transact((tx) => {
            if (!admitted())
                return null;
            const cur = tx.entity(GIT_MIRROR, id);
            if (!cur || cur.removed || cur.version !== seen.version)
                return null;
            const now = nowSeconds();
            let next;
            if (outcome.kind === 'pushed') {
                if (cur.state === 'ok' && cur.last_pushed_commit_id === outcome.commit_id)
                    return cur;
                next = { ...cur, version: cur.version + 1, state: 'ok', last_pushed_commit_id: outcome.commit_id, last_pushed_at_s: now, last_error: null, failures: 0, next_attempt_at_ms: null, updated_at_s: now };
            }
            else if (outcome.kind === 'failed') {
                next = { ...cur, version: cur.version + 1, state: 'retrying', last_error: outcome.error, failures: cur.failures + 1, next_attempt_at_ms: outcome.next_attempt_at_ms, updated_at_s: now };
            }
            else {
                next = { ...cur, version: cur.version + 1, state: 'diverged', last_error: outcome.reason, next_attempt_at_ms: null, diverged_remote_commit_id: outcome.remote_commit_id, diverged_at_s: now, updated_at_s: now };
                tx.emit('git_mirror.diverged', { mirror_id: id, line: cur.line, remote_commit_id: outcome.remote_commit_id, last_pushed_commit_id: cur.last_pushed_commit_id });
            }
            tx.upsert(GIT_MIRROR, id, next);
            tx.onPublish(() => this.mirrors.set(id, next));
            return next;
        });
    }
}
//# sourceMappingURL=git-mirrors.js.map