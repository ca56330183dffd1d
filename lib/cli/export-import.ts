// `cairn export` and `cairn import`: recovery without a server. Both take the data-directory
// lock, so they refuse to run while a server holds it.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { assert, StructError } from 'superstruct';
import { CairnService } from '../authority/service.js';
import { EXPORT_SCHEMA, validateManifest, type ExportManifest } from '../domain/export-manifest.js';
import { LIFECYCLE_PURGED, validatePolicyFlags } from '../domain/repository.js';
import { lockDataDir } from '../store/datadir-lock.js';
import { copyFileHashed, exportFiles } from '../store/export.js';
import { Layout } from '../store/layout.js';
import { ContentStore } from '../store/content-store.js';
import { openSealKey } from '../store/seal-key.js';
import { decodeRegistry } from '../store/registry-file.js';
import { ManifestStruct } from '../http/handlers/lifecycle.js';
import { CliUsageError, parseCommandArgs, parseMaxSnapshotPaths, requireDataDir } from './args.js';
import { repositoryInDataDir } from './target.js';
import { DEFAULT_MAX_SNAPSHOT_PATHS } from '../domain/tree-size.js';

export const EXPORT_HELP = `Usage: cairn export --data DIR --repo N OUT_DIR

Write repository N's authority files to OUT_DIR (absent or empty) with OUT_DIR/manifest.json,
N an index or a name, looked up in the data directory (a name several active repositories share
is refused, listing their indexes),
the same svc.remote-export.v1 manifest retirement serves (exported_at_s = now). Offline: takes
the data-directory lock and refuses while a server holds it. --data must exist.
Webhook secrets and drafts are in the files only sealed with DATA/seal.key, which is not
copied: what a server from before sealing wrote in clear is sealed first (the repository's
workflow.log is rewritten, every record kept).

Options:
  --json   accepted for uniformity: the result is always one JSON object
`;

export const IMPORT_HELP = `Usage: cairn import --data DIR [--policy-flags N] [--max-snapshot-paths N] IN_DIR

Restore a directory written by cairn export (IN_DIR/manifest.json plus the files) as a new
repository: every file's size and sha256 are checked, the authority is checked as fsck does,
and it gets a new repository index (printed as JSON). Offline: takes the data-directory lock.

Options:
  --policy-flags N   policy_flags of the restored repository (u8, default 0)
  --max-snapshot-paths N
                     paths a snapshot may hold, as cairn serve's option (default 10000000):
                     a repository holding a larger snapshot is refused
  --json             accepted for uniformity: the result is always one JSON object

--data must name an existing directory (an empty one is a new, empty store).
`;

export async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    data: { type: 'string' }, repo: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, true);
  if (values.help) { process.stdout.write(EXPORT_HELP); return 0; }
  if (typeof values.data !== 'string' || typeof values.repo !== 'string' || positionals.length !== 1) throw new CliUsageError('usage: cairn export --data DIR --repo N OUT_DIR');
  const dataDir = path.resolve(values.data);
  const out = path.resolve(positionals[0]);
  requireDataDir(dataDir);
  const lock = await lockDataDir(dataDir);
  try {
    const layout = new Layout(dataDir);
    const records = decodeRegistry(await fsp.readFile(layout.registryFile));
    // --repo: an index, or a name looked up in this directory's registry.
    const index = repositoryInDataDir(records, values.repo, dataDir);
    const record = records.find((r) => r.repository_index === index);
    if (!record || record.lifecycle_kind === LIFECYCLE_PURGED) throw new CliUsageError(`repository ${index} is not registered (or purged)`);
    await fsp.mkdir(out, { recursive: true });
    if ((await fsp.readdir(out)).length) throw new CliUsageError(`${out} is not empty`);
    const root = layout.repositoryDir(index);
    await sealBeforeExport(layout, root);
    const files = await exportFiles(root);
    for (const f of files) {
      const copied = await copyFileHashed(path.join(root, f.path), path.join(out, ...f.path.split('/')));
      if (copied.sha256 !== f.sha256) throw new Error(`${f.path} changed while exporting`);
    }
    const manifest: ExportManifest = {
      schema: EXPORT_SCHEMA, state: 'complete', repo_name: record.repository_name, namespace: record.namespace,
      exported_at_s: Math.floor(Date.now() / 1000), files,
    };
    await fsp.writeFile(path.join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify({ repository_index: index, out, files: files.length, bytes: files.reduce((n, f) => n + f.size, 0) })}\n`);
    return 0;
  } finally {
    await lock.release();
  }
}

/**
 * What a server from before sealing wrote in clear in workflow.log (webhook secrets, drafts) is
 * sealed before any file is copied (storage-layout.md §17.2), with the data directory's key
 * (made here when no server has made it yet). Opening the store recovers it to its commit
 * point, as a start does.
 */
async function sealBeforeExport(layout: Layout, root: string): Promise<void> {
  const sealKey = await openSealKey(layout.sealKeyFile, true);
  let store: ContentStore;
  try {
    ({ store } = await ContentStore.open(root, { sealKey }));
  } catch (err) {
    // Unopened, nothing tells what it holds in clear: nothing is copied (fsck says what is wrong).
    throw new Error(`the repository does not open, so what it may hold in clear cannot be sealed and nothing is exported (run cairn fsck): ${(err as Error).message}`);
  }
  try {
    const note = await store.sealInClear();
    if (note) process.stderr.write(`note: ${note}\n`);
  } finally {
    store.close();
    await store.whenClosed();
  }
}

export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    data: { type: 'string' }, 'policy-flags': { type: 'string', default: '0' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
    'max-snapshot-paths': { type: 'string', default: String(DEFAULT_MAX_SNAPSHOT_PATHS) },
  }, true);
  if (values.help) { process.stdout.write(IMPORT_HELP); return 0; }
  if (typeof values.data !== 'string' || positionals.length !== 1) throw new CliUsageError('usage: cairn import --data DIR IN_DIR');
  const flags = Number(values['policy-flags']);
  validatePolicyFlags(flags);
  const maxSnapshotPaths = parseMaxSnapshotPaths(values['max-snapshot-paths']);
  const inDir = path.resolve(positionals[0]);
  const dataDir = path.resolve(values.data);
  requireDataDir(dataDir);
  let manifest: ExportManifest;
  try {
    const parsed: unknown = JSON.parse(await fsp.readFile(path.join(inDir, 'manifest.json'), 'utf8'));
    assert(parsed, ManifestStruct);
    manifest = parsed as ExportManifest;
  } catch (err) {
    throw new CliUsageError(`${path.join(inDir, 'manifest.json')}: ${err instanceof StructError ? `field ${err.path.join('.')}: ${err.message}` : (err as Error).message}`);
  }
  validateManifest(manifest);
  const lock = await lockDataDir(dataDir);
  let service: CairnService | null = null;
  try {
    service = await CairnService.open({ dataDir, log: pino({ level: 'silent' }), maxSnapshotPaths });
    const response = await service.restores.importDirectory(inDir, manifest, flags);
    process.stdout.write(`${JSON.stringify(response)}\n`);
    return 0;
  } finally {
    service?.close();
    await lock.release();
  }
}
