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

export interface UiOptions {
  assets: UiAssetTable;
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
    const value = header === null ? null : ctx.get(header) || null;
    ctx.set('Cache-Control', header === null ? 'no-cache' : 'private, no-cache');
    if (header !== null) ctx.vary(header);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderShell(assets, { header, value });
  };
}
