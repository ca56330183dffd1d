// The archive's extension routes (docs/api.md "Archive (extensions)"): a follower's promotion, a
// writer's handover and a switchover's promotion (docs/operations.md "Planned switchover").
import { array, integer, nullable as orNull, object, optional, string } from 'superstruct';
import { Conflict, Invalid } from '../../domain/errors.js';
import { checkPromotion, NO_PROMOTION } from '../promote-access.js';
import type { Handler, RouteContext } from '../route-types.js';
import { arr, enumOf, nullable, obj, str, type Schemas } from '../json-schema.js';
import { validate } from '../validate.js';

/**
 * POST /archive/promote: the follower applies the newest manifests, claims a generation and
 * turns writable. A caller that goes away before the claim stops the promotion there. Only a
 * caller ../promote-access.ts lets through (401/403 otherwise, before anything is read or written).
 */
export const promote: Handler = async ({ service, koa, promotion, access }) => {
  // What a writer is says /healthz already: a 409 there tells nobody anything new.
  if (!service.promote) throw new Conflict('this server does not follow an archive (cairn serve --follow); there is nothing to promote');
  checkPromotion(koa.req, promotion ?? NO_PROMOTION);
  const gone = new AbortController();
  const onClose = (): void => { if (!koa.res.writableEnded) gone.abort(); };
  koa.res.once('close', onClose);
  try {
    const result = await service.promote(gone.signal);
    const { url, generation } = result as { url?: string; generation?: string };
    await access?.book.audit(null, 'archive.promoted', { url: url ?? null, generation: generation ?? null });
    return { json: result };
  } finally {
    koa.res.off('close', onClose);
  }
};

/** POST /archive/handover's body. */
export const Handover = object({ successor: optional(string()), timeout_seconds: optional(integer()) });
/** POST /archive/takeover's body: what the old writer's handover answered. */
export const Takeover = object({
  archive_id: string(),
  repositories: array(object({ repository: integer(), commit: string() })),
  access_log_length: orNull(integer()),
});

const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
const DEFAULT_HANDOVER_SECONDS = 60;

/** The successor's address as given: an http(s) URL without credentials (it is echoed in every refusal). */
function successorUrl(value: string | undefined): string | null {
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Invalid('successor must be the next writer\'s URL (http://HOST:PORT)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Invalid('successor must be an http:// or https:// URL');
  if (url.username !== '' || url.password !== '') throw new Invalid('successor must not carry credentials (it is shown in every refusal)');
  if (value.length > 2048) throw new Invalid('successor is longer than 2048 characters');
  return value;
}

/** Calls the service while the caller is connected; one who goes away aborts `signal` (a promotion then stops before its claim). */
async function whileConnected<T>(koa: RouteContext['koa'], run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const gone = new AbortController();
  const onClose = (): void => { if (!koa.res.writableEnded) gone.abort(); };
  koa.res.once('close', onClose);
  try {
    return await run(gone.signal);
  } finally {
    koa.res.off('close', onClose);
  }
}

/**
 * POST /archive/handover: the writer stops accepting writes, ships everything, records the
 * handover and answers what it shipped (lib/authority/archiving.ts). Only a caller
 * ../promote-access.ts lets through (401/403 before anything changes). Idempotent.
 */
export const handover: Handler = async ({ service, koa, promotion, access, body }) => {
  if (!service.handover) throw new Conflict('this server does not ship to an archive (cairn serve --archive): there is nothing to hand over');
  checkPromotion(koa.req, promotion ?? NO_PROMOTION);
  const req = validate(body, Handover);
  const successor = successorUrl(req.successor);
  const seconds = req.timeout_seconds ?? DEFAULT_HANDOVER_SECONDS;
  if (seconds < 1 || seconds > 3600) throw new Invalid('timeout_seconds must be 1 to 3600');
  const result = await service.handover({ successor, timeoutMs: seconds * 1000 });
  const { url, generation } = result as { url?: string; generation?: string };
  await access?.book.audit(null, 'archive.handed_over', { url: url ?? null, generation: generation ?? null, successor });
  return { json: result };
};

/**
 * POST /archive/takeover: a switchover's promotion — the follower applies manifests until it
 * holds exactly the commits the old writer handed over, then claims and turns writable as
 * POST /archive/promote does; short of them (or past them) it is refused and nothing is claimed.
 */
export const takeover: Handler = async ({ service, koa, promotion, access, body }) => {
  if (!service.promote) throw new Conflict('this server does not follow an archive (cairn serve --follow); there is nothing to promote');
  checkPromotion(koa.req, promotion ?? NO_PROMOTION);
  const req = validate(body, Takeover);
  if (!/^[0-9a-f]{32}$/.test(req.archive_id)) throw new Invalid('archive_id must be the archive id of the handover (32 hexadecimal digits)');
  for (const r of req.repositories) {
    if (r.repository < 0 || r.repository > 0xffffffff) throw new Invalid('repositories[].repository must be a repository index');
    if (!DECIMAL.test(r.commit)) throw new Invalid('repositories[].commit must be a commit generation (decimal)');
  }
  if (req.access_log_length !== null && req.access_log_length < 0) throw new Invalid('access_log_length must be 0 or more, or null');
  const promote = service.promote;
  const result = await whileConnected(koa, (signal) => promote(signal, req));
  const { url, generation } = result as { url?: string; generation?: string };
  await access?.book.audit(null, 'archive.promoted', { url: url ?? null, generation: generation ?? null });
  return { json: result };
};

export const SCHEMAS: Schemas = {
  ArchiveHandover: obj({
    url: str,
    archive_id: { ...str, description: 'the archive\'s id (its archive-id object)' },
    generation: { ...str, description: 'the archive generation this writer shipped under (decimal)' },
    successor: nullable(str),
    handed_over_at: str,
    repositories: arr(obj({
      repository: { type: 'integer' },
      commit: { ...str, description: 'the last commit acknowledged (decimal)' },
      manifest: { ...str, description: 'the stored manifest covering it' },
    })),
    access_log_length: { ...nullable({ type: 'integer' }), description: 'the length of access.log shipped (accounts, tokens, grants), null when there is none' },
  }, { description: 'the writer accepts no more writes; a stored manifest covers the last commit of every repository' }),
  ArchivePromotion: obj({
    url: str,
    generation: { ...str, description: 'the archive generation this server claimed and now ships under (decimal)' },
    repositories: arr(obj({
      repository: { type: 'integer' },
      applied_commit: { ...str, description: 'commit generation of the manifest applied last (decimal)' },
      manifest: str,
    })),
  }, { description: 'the follower applied the newest manifests, claimed the next archive generation and now writes' }),
  FollowStatus: obj({
    url: str,
    state: enumOf(['following', 'error', 'promoting', 'promoted']),
    generation: nullable(str),
    lag_seconds: { type: 'number', description: 'the greatest lag_seconds of any repository' },
    behind_commits: { type: 'integer', description: 'the commits behind, over every repository' },
    repositories: arr(obj({
      repository: { type: 'integer' },
      applied_commit: { ...str, description: 'commit generation of the manifest applied last (decimal)' },
      manifest: str,
      newest_commit: { ...str, description: 'commit generation of the writer\'s newest manifest as last seen (decimal)' },
      behind_commits: { type: 'integer', description: 'newest_commit minus applied_commit' },
      behind_manifests: { type: 'integer', description: 'the writer\'s manifests after the one applied' },
      lag_seconds: { type: 'number', description: 'capture time of the writer\'s newest manifest as last seen minus that of the one applied (0 only when it applied the newest)' },
    })),
    last_error: nullable(str),
    last_applied_at: nullable(str),
    checked_at: { ...nullable(str), description: 'when the writer\'s newest manifests were last read from the store: the lag is as of then' },
  }, { description: 'present only on a follower (serve --follow), and after its promotion' }),
};
