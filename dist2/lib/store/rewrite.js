// Restore adopts an authority under a new index: the only stored copies of the repository index
// are authority.bin and the keys of jobs.log records (storage-layout.md §5, §13). authority.bin
// is rewritten with the write procedure of §3; each committed jobs.log record is rewritten in
// place (same length, new key and CRC), so the committed lengths in commit.bin stay exact. The
// staged tree is not live: a failure leaves it to be uploaded again.
import { closeSync, fdatasyncSync, openSync, writeSync, promises as fsp } from 'node:fs';
import { decodeAuthorityFile, encodeAuthorityFile } from './authority-file.js';
import { crc32 } from './binary.js';
import { ContentStore } from './content-store.js';
import { writeFileDurable } from './durable.js';
import { AuthorityLayout } from './layout.js';
export async function rewriteRepositoryIndex(root, newIndex) {
    const layout = new AuthorityLayout(root);
    const identity = decodeAuthorityFile(await fsp.readFile(layout.identityFile));
    await writeFileDurable(layout.identityFile, encodeAuthorityFile({ ...identity, repository_index: newIndex }));
    // Opening recovers (and upgrades a format-v0 export) so the committed records are known.
    const { store } = await ContentStore.open(root);
    const records = [...store.logRecords('jobs')];
    const jobsFile = layout.logFile('jobs', store.commitState.log_files.jobs);
    store.close();
    if (!records.length)
        return;
    const fd = openSync(jobsFile, 'r+');
    try {
        for (const { offset, body } of records) {
            body.writeUInt32LE(newIndex, 0);
            const crc = Buffer.alloc(4);
            crc.writeUInt32LE(crc32(body), 0);
            writeSync(fd, body.subarray(0, 4), 0, 4, offset + 4);
            writeSync(fd, crc, 0, 4, offset + 4 + body.length);
        }
        fdatasyncSync(fd);
    }
    finally {
        closeSync(fd);
    }
}
//# sourceMappingURL=rewrite.js.map