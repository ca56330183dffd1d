export const JOB_KINDS = [
    { kind: 1, job_type: 'snapshot.ingest', external: false },
    { kind: 2, job_type: 'pack.verify', external: false },
    { kind: 3, job_type: 'locator.merge', external: false },
    { kind: 4, job_type: 'plan.artifact_pack', external: false },
    { kind: 5, job_type: 'task.audit_refresh', external: false },
    { kind: 6, job_type: 'land.apply', external: false },
    { kind: 7, job_type: 'patchset.ci', external: true },
    { kind: 8, job_type: 'policy.evaluate', external: false },
    { kind: 9, job_type: 'repository.export', external: false },
    { kind: 11, job_type: 'repo.ci', external: true },
];
export const JOB_KIND_PATCHSET_CI = 7;
export const JOB_KIND_REPO_CI = 11;
export function jobKind(kind) {
    return JOB_KINDS.find((k) => k.kind === kind);
}
//# sourceMappingURL=job-kinds.js.map