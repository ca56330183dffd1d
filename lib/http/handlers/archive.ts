// The archive's extension routes (docs/api.md "Archive (extensions)"): a follower's promotion.
import { Conflict } from '../../domain/errors.js';
import { checkPromotion, NO_PROMOTION } from '../promote-access.js';
import type { Handler } from '../route-types.js';
import { arr, enumOf, nullable, obj, str, type Schemas } from '../json-schema.js';

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

export const SCHEMAS: Schemas = {
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
