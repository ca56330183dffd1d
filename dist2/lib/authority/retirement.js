// Retirement of a repository authority (spec: "Retirement status", the Repository rows of the
// transition table): start, status with drain counts and the export manifest, file download,
// purge and abort. Lifecycle changes of one repository are serialized by its lifecycle mutex.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import { Conflict, NotFound } from '../domain/errors.js';
import { canonicalManifest, EXPORT_SCHEMA } from '../domain/export-manifest.js';
import { LIFECYCLE_ACTIVE, LIFECYCLE_PURGED, LIFECYCLE_RETIRING } from '../domain/repository.js';
import { exportFiles, isListedFile } from '../store/export.js';
import { fsyncDir, removeDurable, writeFileDurable, TEMP_MARKER } from '../store/durable.js';
import { crashPoint } from '../store/crash-point.js';
export const RETIREMENT_CONTRACT = 'svc.server.repository-retirement.v1';
export class Retirement {
    service;
    digests = new Map();
    constructor(service) {
        this.service = service;
    }
    ackFile(index) {
        return path.join(this.service.layout.tombstonesDir, `${index}.ack`);
    }
    drain(record) {
        if (record.lifecycle_kind === LIFECYCLE_PURGED)
            return { queued_worker_jobs: 0, running_worker_jobs: 0 };
        const { queued, running } = this.service.authority(record.repository_index).jobs.counts();
        return { queued_worker_jobs: queued, running_worker_jobs: running };
    }
    digestCache(index) {
        let cache = this.digests.get(index);
        if (!cache) {
            cache = new Map();
            this.digests.set(index, cache);
        }
        return cache;
    }
    /**
     * The export manifest of a retiring, drained repository (null otherwise). Status polls reuse
     * digests of unchanged files; purge (`rehash`) hashes every byte again.
     */
    async manifest(record, rehash = false) {
        if (record.lifecycle_kind !== LIFECYCLE_RETIRING)
            return null;
        const drain = this.drain(record);
        if (drain.queued_worker_jobs || drain.running_worker_jobs)
            return null;
        // No listing while workflow.log still holds a secret or a draft in clear (storage-layout.md §17.2).
        if (this.service.authority(record.repository_index).store.fieldsInClear > 0)
            return null;
        return {
            schema: EXPORT_SCHEMA,
            state: 'complete',
            repo_name: record.repository_name,
            namespace: record.namespace,
            // The time retirement started: stable while retiring, so a fresh manifest equals an earlier one.
            exported_at_s: record.updated_at_s,
            files: await exportFiles(this.service.layout.repositoryDir(record.repository_index), rehash ? undefined : this.digestCache(record.repository_index)),
        };
    }
    async status(index) {
        const record = this.service.record(index);
        if (record.lifecycle_kind !== LIFECYCLE_PURGED)
            await this.service.authority(index).jobs.expireLeases();
        const drain = this.drain(record);
        const manifest = await this.manifest(record);
        return { repository: record, drain, ready_for_export: manifest !== null, manifest };
    }
    start(index) {
        return this.service.lifecycleExclusive(index, async () => {
            const record = this.service.record(index);
            if (record.lifecycle_kind === LIFECYCLE_PURGED)
                throw new Conflict(`repository ${index} is purged`);
            // The files are about to be listed: what a server from before sealing wrote in clear is
            // sealed first (the open did it already unless it failed; a failure here refuses the start).
            await this.service.authority(index).store.sealInClear();
            if (record.lifecycle_kind === LIFECYCLE_ACTIVE) {
                await this.service.registry.update(index, (r) => ({ ...r, lifecycle_kind: LIFECYCLE_RETIRING }));
            }
            // From here the files stay as exported: no compaction rewrites a log (one running has stopped).
            await this.service.authority(index).store.freezeFiles();
            return this.status(index);
        });
    }
    abort(index) {
        return this.service.lifecycleExclusive(index, async () => {
            const record = this.service.record(index);
            if (record.lifecycle_kind === LIFECYCLE_PURGED)
                throw new Conflict(`repository ${index} is purged; a purged authority cannot be reactivated`);
            if (record.lifecycle_kind === LIFECYCLE_ACTIVE)
                return { aborted: false, already_aborted: true, repository: record };
            const repository = await this.service.registry.update(index, (r) => ({ ...r, lifecycle_kind: LIFECYCLE_ACTIVE }));
            try {
                this.service.authority(index).store.thawFiles();
            }
            catch {
                // An authority that failed its checks at open has no files open to thaw.
            }
            return { aborted: true, already_aborted: false, repository };
        });
    }
    /** An exported file's bytes as a stream, only for a path in the current manifest listing. */
    async openExportedFile(index, filePath) {
        const record = this.service.record(index);
        const drain = record.lifecycle_kind === LIFECYCLE_RETIRING ? this.drain(record) : null;
        if (!drain || drain.queued_worker_jobs || drain.running_worker_jobs)
            throw new NotFound('no export manifest: the repository is not retiring with drained jobs');
        if (this.service.authority(index).store.fieldsInClear > 0)
            throw new NotFound('no export manifest: workflow.log still holds webhook secrets or drafts in clear (start the retirement again to seal them)');
        const root = this.service.layout.repositoryDir(index);
        // Exactly a file of the listing: "..", absolute, encoded separators or NUL never are.
        if (!(await isListedFile(root, filePath)))
            throw new NotFound('file is not in the export manifest');
        const file = path.join(root, filePath);
        const { size } = await fsp.stat(file);
        return { stream: createReadStream(file, { highWaterMark: 1024 * 1024 }), length: size };
    }
    /**
     * Purge: the body must equal a freshly computed manifest and jobs must be drained. Order:
     * remember the acknowledgement (tombstones/N.ack), mark the record purged (the commit point),
     * then remove the directory. Recovery at open removes a purged repository's leftover directory.
     */
    purge(index, acknowledgement) {
        return this.service.lifecycleExclusive(index, async () => {
            const record = this.service.record(index);
            const ackDigest = createHash('sha256').update(canonicalManifest(acknowledgement)).digest('hex');
            if (record.lifecycle_kind === LIFECYCLE_PURGED) {
                const stored = await fsp.readFile(this.ackFile(index), 'utf8').catch(() => '');
                if (stored.trim() !== ackDigest)
                    throw new Conflict('the acknowledgement does not match the one this repository was purged with');
                return { purged: true, already_purged: true, repository: record };
            }
            if (record.lifecycle_kind !== LIFECYCLE_RETIRING)
                throw new Conflict(`repository ${index} is not retiring; start retirement first`);
            // Mutations admitted before retirement started may still be running: wait them out and
            // keep new ones from starting while the manifest is compared and the files closed.
            await this.service.authority(index).quiesce(async () => {
                const drain = this.drain(record);
                if (drain.queued_worker_jobs || drain.running_worker_jobs) {
                    throw new Conflict(`worker jobs are not drained (${drain.queued_worker_jobs} queued, ${drain.running_worker_jobs} running)`);
                }
                const fresh = await this.manifest(record, true);
                if (!fresh || canonicalManifest(fresh) !== canonicalManifest(acknowledgement)) {
                    throw new Conflict('the acknowledgement is not the complete, unchanged export manifest');
                }
                await fsp.mkdir(path.dirname(this.ackFile(index)), { recursive: true });
                await writeFileDurable(this.ackFile(index), `${ackDigest}\n`);
                crashPoint('purge:after-ack');
            }, true);
            this.service.closeAuthority(index);
            this.digests.delete(index);
            const repository = await this.service.registry.update(index, (r) => ({ ...r, lifecycle_kind: LIFECYCLE_PURGED, tombstoned: true }));
            crashPoint('purge:after-registry');
            const root = this.service.layout.repositoryDir(index);
            const doomed = path.join(path.dirname(root), `.purged-${index}${TEMP_MARKER}${randomBytes(8).toString('hex')}`);
            await fsp.rename(root, doomed);
            await fsyncDir(path.dirname(root));
            await removeDurable(doomed);
            // Its shadow git repository is derived from it: it goes too (a leftover is removed at open).
            await fsp.rm(this.service.layout.gitShadow(index), { recursive: true, force: true });
            return { purged: true, already_purged: false, repository };
        });
    }
}
//# sourceMappingURL=retirement.js.map