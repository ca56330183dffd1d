// The API reference renderer's files: swagger-ui's prebuilt bundle, kept in the package under
// vendor/swagger-ui/ (refreshed by vendor/swagger-ui/update.sh; the npm package swagger-ui-dist
// is no dependency, so its install-time analytics hook, @scarf/scarf, is never installed). The
// server serves them itself: no CDN. The HTTP layer reads no files; `cairn serve` gives it this
// source (lib/http/handlers/docs.ts says which files the page loads).
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { AssetSource } from '../http/route-types.js';
import { PACKAGE_ROOT } from './ui-files.js';

export const SWAGGER_UI_DIR = path.join(PACKAGE_ROOT, 'vendor/swagger-ui');

/** Files of vendor/swagger-ui by name, each read once and then kept (about 2 MB in all). */
export function swaggerUiAssets(): AssetSource {
  const kept = new Map<string, Promise<Buffer | null>>();
  return {
    read(file: string): Promise<Buffer | null> {
      if (file !== path.basename(file)) return Promise.resolve(null);
      let bytes = kept.get(file);
      if (!bytes) {
        bytes = fsp.readFile(path.join(SWAGGER_UI_DIR, file)).catch(() => null);
        kept.set(file, bytes);
      }
      return bytes;
    },
  };
}
