// The zstd binding (zstd-napi's native addon), loaded here so that an install without it fails
// with a sentence that says how to fix it. npm builds the addon in zstd-napi's install script,
// which npm skips for a global install unless allowed (`--allow-scripts=zstd-napi`, README
// "Install"); the commands that never touch packs (help, --version, config) do not load this.
import { createRequire } from 'node:module';
import type * as Binding from 'zstd-napi/binding.js';

function load(): typeof Binding {
  try {
    return createRequire(import.meta.url)('zstd-napi/binding.js') as typeof Binding;
  } catch (err) {
    throw new Error(
      `the zstd-napi native addon is not built (${(err as Error).message.split('\n')[0]}): npm skips its install script unless allowed. ` +
        'Install cairn with `npm install -g --allow-scripts=zstd-napi ./cairn-*.tgz`, or run `npm rebuild zstd-napi` where it is installed ' +
        '(it needs python3, make and a C++ compiler when no prebuilt binary can be downloaded)',
    );
  }
}

const zstd: typeof Binding = load();
export default zstd;
