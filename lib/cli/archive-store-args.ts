// The archive's object store as the archive commands without a server open it (restore,
// archive verify, archive prune): the connection from the AWS_* environment or
// --archive-config, sealed with --archive-key-file when one is given (lib/archive/encryption.ts).
// A configuration mistake is the user's, so a usage error (exit 2).
import { archiveStore, type EncryptedStore } from '../archive/encryption.js';
import { ObjectStoreError } from '../archive/object-store.js';
import { openS3Store } from '../archive/s3-store.js';
import { CliUsageError } from './args.js';

export async function openArchiveArgs(url: string, values: { 'archive-config'?: unknown; 'archive-key-file'?: unknown }): Promise<EncryptedStore> {
  const given = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  try {
    return await archiveStore(await openS3Store(url, process.env, given(values['archive-config'])), given(values['archive-key-file']));
  } catch (err) {
    if (err instanceof ObjectStoreError && err.kind === 'config') throw new CliUsageError(err.message);
    throw err;
  }
}
