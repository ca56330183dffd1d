// Restore adopts an authority under a new index: the only stored copies of the repository index
// are authority.bin and the keys of jobs.log records (storage-layout.md §5, §13). Both are
// rewritten here, each with the write procedure of §3.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { decodeAuthorityFile, encodeAuthorityFile } from './authority-file.js';
import { writeFileDurable } from './durable.js';
import { compactJobLog, loadJobLog } from './job-log.js';

export async function rewriteRepositoryIndex(root: string, newIndex: number): Promise<void> {
  const identityFile = path.join(root, 'authority.bin');
  const identity = decodeAuthorityFile(await fsp.readFile(identityFile));
  await writeFileDurable(identityFile, encodeAuthorityFile({ ...identity, repository_index: newIndex }));
  const jobsFile = path.join(root, 'jobs.log');
  const { jobs } = await loadJobLog(jobsFile);
  const rewritten = [...jobs.values()].sort((a, b) => a.worker_job_index - b.worker_job_index).map((j) => ({ ...j, repository_index: newIndex }));
  await compactJobLog(jobsFile, rewritten);
}
