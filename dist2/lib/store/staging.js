export class Staging {
    adopt = new Map();
    /** Packs built by the server (plan artifacts, merges), written by the commit itself. */
    newPacks = new Map();
    blobs = new Map();
    trees = new Map();
    /** In commit order: parents before children. */
    snapshots = new Map();
    lines = new Map();
    appends = { jobs: [], plans: [] };
    /** workflow.log records of a batch (one per transaction that upserted anything). */
    workflow = [];
    /** A transaction's own upserts, written as one record when it joins its batch. */
    upserts = [];
    /** Events, in the order their transactions emitted them. */
    events = [];
    /** Module state staged by transactions (job records, plan records, ...), by namespace. */
    overlay = new Map();
    hooks = [];
    get empty() {
        return this.adopt.size === 0 && this.newPacks.size === 0 && this.blobs.size === 0 && this.trees.size === 0 && this.snapshots.size === 0 && this.lines.size === 0
            && this.appends.jobs.length === 0 && this.appends.plans.length === 0 && this.workflow.length === 0 && this.upserts.length === 0 && this.events.length === 0;
    }
    staged(ns, key) {
        return this.overlay.get(ns)?.get(key);
    }
    stage(ns, key, value) {
        let m = this.overlay.get(ns);
        if (!m)
            this.overlay.set(ns, (m = new Map()));
        m.set(key, value);
    }
    /** Move a finished transaction's changes into this batch. */
    absorb(tx, atS) {
        for (const [k, v] of tx.adopt)
            this.adopt.set(k, v);
        for (const [k, v] of tx.newPacks)
            this.newPacks.set(k, v);
        for (const [k, v] of tx.blobs)
            this.blobs.set(k, v);
        for (const [k, v] of tx.trees)
            this.trees.set(k, v);
        for (const [k, v] of tx.snapshots)
            this.snapshots.set(k, v);
        for (const [k, v] of tx.lines)
            this.lines.set(k, v);
        this.appends.jobs.push(...tx.appends.jobs);
        this.appends.plans.push(...tx.appends.plans);
        this.events.push(...tx.events);
        if (tx.upserts.length)
            this.workflow.push({ at_s: atS, upserts: [...tx.upserts] });
        for (const [ns, m] of tx.overlay)
            for (const [k, v] of m)
                this.stage(ns, k, v);
        this.hooks.push(...tx.hooks);
    }
}
//# sourceMappingURL=staging.js.map