// The reviewer UI's HTTP side: a small Koa middleware mounted before the API router
// (lib/http/app.ts). It answers `/ui`, `/ui/assets/...` (hashed, immutable) and every other
// `/ui/...` path with the app shell, so each page has a stable URL the browser can reload. It
// is not a row of the route table: that table is the interface's surface (the spec's 78
// operations plus marked extensions), and everything derived from it (405 `Allow`, the
// handshake hint, the route-count and status sweeps) describes JSON operations, not a page
// server with a wildcard path. The UI reads and writes only through those operations, from the
// browser.
import type { Context, Middleware } from 'koa';
import { ASSET_PREFIX, type UiAssetTable } from './assets.js';
import { renderShell } from './shell.js';

/**
 * Every UI response carries it: no inline script or style, nothing from another origin, no
 * framing, no <base>, forms only to this origin. `img-src 'self' data:` covers the favicon and
 * small data: images a stylesheet may use; `connect-src 'self'` is the /v1 interface.
 */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * What a page path names, read by the server so that a path naming nothing answers 404 (the
 * shell still renders the page's own "not found"). The shapes are app.js's `route()`; the
 * named records are those cheap to look up (the registry and a repository's in-memory
 * workflow records). Anything else (a line, a job, a plan) is checked by the page's own reads.
 */
export type UiPage =
  | { kind: 'home' }
  | { kind: 'repository'; repo: number }
  | { kind: 'change'; repo: number; ref: string }
  | { kind: 'task'; repo: number; id: string }
  | { kind: 'land'; repo: number; id: string };

/** Answers whether the record a page names exists (false only for a definite "no such record"). */
export interface UiLookup {
  exists(page: UiPage): Promise<boolean>;
}

const INDEX = /^(0|[1-9][0-9]*)$/;

/** The page a /ui/ path names, or null for a path that is no page at all (a shape app.js does not route). */
export function uiPage(pathname: string): UiPage | null {
  const segments: string[] = [];
  for (const raw of pathname.replace(/^\/ui\/?/, '').split('/')) {
    if (raw === '') continue;
    try {
      segments.push(decodeURIComponent(raw));
    } catch {
      return null;
    }
  }
  if (segments.length === 0) return { kind: 'home' };
  const [a, r, area, id, sub, subId] = segments;
  if (a !== 'repos' || r === undefined || !INDEX.test(r) || Number(r) > 0xffffffff) return null;
  const repo = Number(r);
  const n = segments.length;
  if (n === 2) return { kind: 'repository', repo };
  switch (area) {
    case 'changes':
      return n === 3 ? { kind: 'repository', repo } : n === 4 ? { kind: 'change', repo, ref: id } : null;
    case 'search':
    case 'settings':
      return n === 3 ? { kind: 'repository', repo } : null;
    case 'lines':
    case 'jobs':
      return n === 3 || n === 4 ? { kind: 'repository', repo } : null;
    case 'plans':
      if (n === 3 || n === 4) return { kind: 'repository', repo };
      return n === 6 && sub === 'revisions' && subId !== '' ? { kind: 'repository', repo } : null;
    case 'snapshots':
      return n === 4 ? { kind: 'repository', repo } : null;
    case 'tasks':
      return n === 4 ? { kind: 'task', repo, id } : null;
    case 'lands':
      return n === 4 ? { kind: 'land', repo, id } : null;
    default:
      return null;
  }
}

export interface UiOptions {
  assets: UiAssetTable;
  /** Who answers whether a page's repository, change, task or land exists; without it every page shape answers 200. */
  lookup?: UiLookup;
  /**
   * Take the reviewer's name from this request header (set by a trusted ingress) instead of
   * asking the reviewer. Null: the page asks once and keeps the name in localStorage.
   */
  identityHeader?: string | null;
}

/** RFC 9110 token: what a header name may be. */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function secure(ctx: Context): void {
  ctx.set('Content-Security-Policy', UI_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
}

function text(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = body;
}

export function uiMiddleware(options: UiOptions): Middleware {
  const { assets } = options;
  const header = options.identityHeader ?? null;
  if (header !== null && !HEADER_NAME.test(header)) throw new Error(`--ui-identity-header: "${header}" is not a header name`);

  return async (ctx, next) => {
    const p = ctx.path;
    if (p === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      // A person who opens the server's address lands on the UI; API clients never ask for /.
      ctx.state.routeTemplate = '/';
      ctx.state.operation = 'ui.redirect';
      ctx.redirect('/ui/');
      return;
    }
    if (p !== '/ui' && !p.startsWith('/ui/')) return next();

    const isAsset = p.startsWith(ASSET_PREFIX);
    ctx.state.routeTemplate = isAsset ? `${ASSET_PREFIX}{asset}` : '/ui/{page}';
    ctx.state.operation = isAsset ? 'ui.asset' : 'ui.page';
    secure(ctx);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', 'GET, HEAD');
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      return text(ctx, 405, 'the UI serves GET and HEAD only; its actions call the /v1 interface\n');
    }
    if (p === '/ui') {
      ctx.status = 308;
      ctx.redirect(`/ui/${ctx.querystring ? `?${ctx.querystring}` : ''}`);
      return;
    }
    if (isAsset) {
      const asset = assets.byUrl.get(p);
      if (!asset) {
        ctx.set('Cache-Control', 'no-store');
        return text(ctx, 404, 'no such UI asset (asset URLs change with their content; reload the page)\n');
      }
      ctx.set('Cache-Control', IMMUTABLE);
      ctx.type = asset.contentType;
      ctx.body = asset.bytes;
      return;
    }
    // The name app.ts took from the header (checked against the ingress rules); read raw only when mounted alone.
    const value = header === null ? null : ctx.state.identity !== undefined ? (ctx.state.identity as string | null) : ctx.get(header) || null;
    ctx.set('Cache-Control', header === null ? 'no-cache' : 'private, no-cache');
    if (header !== null) ctx.vary(header);
    // A path that names nothing is a 404 (for crawlers, link checkers and scripts); the body is
    // still the shell, so a person sees the page's own "not found" and the way back.
    const page = uiPage(p);
    const found = page !== null && (page.kind === 'home' || !options.lookup || (await options.lookup.exists(page)));
    ctx.status = found ? 200 : 404;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderShell(assets, { header, value });
  };
}
