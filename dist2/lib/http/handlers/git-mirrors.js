// Git mirrors (extension routes; docs/git.md "Mirror", docs/api.md "Git"): a line pushed to a git
// remote after each move. A registration's credential is the name of a grant the operator gave
// the server (cairn serve --git-mirror-credential); the secret itself is never accepted, stored
// or answered.
import { nullable, object, optional, string } from 'superstruct';
import { MIRROR_STATES } from '../../domain/git-mirrors.js';
import { arr, constant, enumOf, int, nullable as orNull, obj, ref, str, uint } from '../json-schema.js';
import { requireAuthority } from '../route-types.js';
import { validate } from '../validate.js';
/** Unknown fields are refused (422): a misspelt `credential` must not register a mirror without one. */
export const Register = object({ line: string(), url: string(), credential: optional(nullable(string())) });
function projection(m, repositoryIndex) {
    return {
        mirror_id: m.mirror_id,
        repository_index: repositoryIndex,
        line: m.line,
        url: m.url,
        credential: m.credential,
        state: m.state,
        last_pushed_commit_id: m.last_pushed_commit_id,
        last_pushed_at_s: m.last_pushed_at_s,
        last_error: m.last_error,
        failures: m.failures,
        next_attempt_at_ms: m.next_attempt_at_ms,
        diverged_remote_commit_id: m.diverged_remote_commit_id,
        diverged_at_s: m.diverged_at_s,
        created_at_s: m.created_at_s,
        updated_at_s: m.updated_at_s,
    };
}
export const create = async (ctx) => {
    const req = validate(ctx.body, Register);
    const a = requireAuthority(ctx);
    const m = await a.mirrors.register(req, ctx.service.mirrorTargets, ctx.service.mirrorGrants, a.index);
    return { status: 201, json: { mirror: projection(m, a.index) } };
};
export const list = async (ctx) => {
    const a = requireAuthority(ctx);
    const all = a.mirrors.live();
    return { json: { mirrors: all.map((m) => projection(m, a.index)), count: all.length } };
};
export const get = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { mirror: projection(a.mirrors.mirror(ctx.params.mirror_id), a.index) } };
};
export const remove = async (ctx) => {
    const a = requireAuthority(ctx);
    const m = await a.mirrors.remove(ctx.params.mirror_id);
    return { json: { mirror_id: m.mirror_id, removed: true } };
};
export const resume = async (ctx) => {
    const a = requireAuthority(ctx);
    return { json: { mirror: projection(await a.mirrors.resume(ctx.params.mirror_id), a.index) } };
};
const commitId = { ...str, pattern: '^[0-9a-f]{40}$' };
export const SCHEMAS = {
    GitMirror: obj({
        mirror_id: { ...str, description: 'mirror-<sequence>' },
        repository_index: uint,
        line: { ...str, description: 'the line pushed, as branch refs/heads/<line>' },
        url: { ...str, description: 'the remote (normalized; never holds a password)' },
        credential: { ...orNull(str), description: 'the name of the server\'s credential grant (cairn serve --git-mirror-credential) whose secret is sent; the secret is never answered' },
        state: { ...enumOf(MIRROR_STATES), description: 'pending: no push finished yet (or resumed); ok: the remote is at last_pushed_commit_id; retrying: the last push failed, next_attempt_at_ms says when the next one runs; diverged: the remote holds a commit that is not the line\'s, nothing is pushed until resumed' },
        last_pushed_commit_id: { ...orNull(commitId), description: 'the commit the remote\'s branch was set to (or found at) by this mirror' },
        last_pushed_at_s: orNull(uint),
        last_error: { ...orNull(str), description: 'why the last push failed, or why the mirror diverged; null after a success' },
        failures: { ...uint, description: 'failed pushes in a row' },
        next_attempt_at_ms: { ...orNull(uint), description: 'when a retrying mirror pushes next (ms since the epoch)' },
        diverged_remote_commit_id: { ...orNull(commitId), description: 'the remote\'s commit that stopped the mirror (null when its branch was deleted, or not diverged)' },
        diverged_at_s: orNull(uint),
        created_at_s: uint,
        updated_at_s: uint,
    }),
    GitMirrorResult: obj({ mirror: ref('GitMirror') }),
    GitMirrorList: obj({ mirrors: { ...arr(ref('GitMirror')), description: 'oldest first' }, count: { ...int, minimum: 0 } }),
    GitMirrorRemoved: obj({ mirror_id: str, removed: constant(true) }),
};
//# sourceMappingURL=git-mirrors.js.map