// Repository rules of one authority (docs/api.md "Repository rules"): one workflow.log entity
// (`repository_rules`/`rules`, storage-layout.md §17), so the rules export, restore and archive
// with the repository. A change of rules is one transaction with its `rules.changed` event.
// The CODEOWNERS of a target line's head is read before the gates judge (they run inside
// transactions, which read nothing from disk) and kept parsed by snapshot, a bounded cache.
import { NotFound } from '../../domain/errors.js';
import { nowSeconds } from '../../domain/repository.js';
import { CODEOWNERS_PATHS, MAX_CODEOWNERS_BYTES, parseCodeOwners } from '../../domain/workflow/codeowners.js';
import { NO_GROUPS, parseRulesPatch, REPOSITORY_RULES, RULE_FIELDS, rulesOf, RULES_ID, touchedPaths } from '../../domain/workflow/repo-rules.js';
import { changedEntries } from '../../domain/workflow/content-diff.js';
import { crashPoint } from '../../store/crash-point.js';
import { POLICY_RESOLVE_THREADS } from './gates.js';
/** Heads whose CODEOWNERS are kept parsed. */
const CODEOWNERS_CACHE = 64;
/** Patchsets whose record lists only some of their paths, kept with every path they touch. */
const TOUCHED_CACHE = 16;
/** Paths kept for one such patchset at most: a bigger one cannot be judged by its code owners. */
export const MAX_TOUCHED_PATHS = 200_000;
export class RulesBook {
    store;
    /** The repository's policy_flags (the service sets it): bit 1 requires resolved threads whatever the rule says. */
    policyFlags = () => 0;
    /** Who belongs to a group (the server plugs in its groups; by default nobody belongs to any). */
    groupMembers = NO_GROUPS;
    /** Parsed CODEOWNERS (null: the tree has none) by head snapshot, least recently used first. */
    owners = new Map();
    settled = new Map();
    /** Every path touched by a patchset whose record lists only some (null: more than MAX_TOUCHED_PATHS). */
    touched = new Map();
    constructor(store) {
        this.store = store;
    }
    recordIn(tx) {
        return tx ? tx.entity(REPOSITORY_RULES, RULES_ID) : this.store.entity(REPOSITORY_RULES, RULES_ID);
    }
    /** The rules as they apply (require_resolved_threads is the rule or policy_flags bit 1). */
    effective(tx) {
        const r = rulesOf(this.recordIn(tx));
        return { ...r, require_resolved_threads: r.require_resolved_threads || (this.policyFlags() & POLICY_RESOLVE_THREADS) !== 0 };
    }
    /** Whether anyone ever set rules here. */
    isSet() {
        return this.recordIn() !== undefined;
    }
    view() {
        const rec = this.recordIn();
        return { rules: this.effective(), updated_at_s: rec?.updated_at_s ?? null, updated_by: rec?.updated_by ?? null };
    }
    /**
     * Set some or all rules (`patch` as a request gives it: checked here, 422/400 before anything
     * is written). One transaction: the record and its `rules.changed` event.
     */
    async set(patch, by) {
        const given = parseRulesPatch(patch);
        crashPoint('rules:set');
        await this.store.transact((tx) => {
            const before = rulesOf(this.recordIn(tx));
            const rules = { ...before, ...given };
            const record = { rules: Object.fromEntries(RULE_FIELDS.map((k) => [k, rules[k]])), updated_at_s: nowSeconds(), updated_by: by };
            tx.upsert(REPOSITORY_RULES, RULES_ID, record);
            const changed = RULE_FIELDS.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(rules[k]));
            tx.emit('rules.changed', { by, fields: changed.join(',') });
        });
        return this.view();
    }
    // ------------------------------------------------------------ CODEOWNERS
    /**
     * Every path `ps` touches: its record's list when complete, else the paths read by
     * `readTouched` (null when not read yet, or more than MAX_TOUCHED_PATHS).
     */
    touchedOf(ps) {
        return touchedPaths(ps) ?? this.touched.get(ps.patchset_id) ?? null;
    }
    /** Read (once) every path a patchset touches whose record lists only some (a diff of its trees). */
    async readTouched(ps) {
        if (touchedPaths(ps) !== null || this.touched.has(ps.patchset_id))
            return;
        const base = this.store.snapshot(ps.base_snapshot_id);
        const revision = this.store.snapshot(ps.revision_snapshot_id);
        if (!base || !revision)
            return;
        const reader = {
            readTree: (id) => this.store.readTree(id),
            blobSize: (id) => this.store.locator('blob', id)?.raw_length ?? 0,
            readBlob: (id) => this.store.readObject('blob', id),
        };
        let paths = [];
        for await (const e of changedEntries(reader, base.root_tree_id, revision.root_tree_id, [], this.store.walkBudget(`the paths of ${ps.patchset_id}`, 2))) {
            if (paths.length >= MAX_TOUCHED_PATHS) {
                paths = null;
                break;
            }
            paths.push(e.path);
        }
        this.touched.set(ps.patchset_id, paths);
        if (this.touched.size > TOUCHED_CACHE)
            this.touched.delete(this.touched.keys().next().value);
    }
    /** The parsed CODEOWNERS of a head already read (null: none there), or undefined when not read yet. */
    codeOwnersRead(head) {
        return this.settled.get(head);
    }
    /** Read (once, then from the cache) the CODEOWNERS of `head`. */
    codeOwners(head) {
        const hit = this.owners.get(head);
        if (hit) {
            this.owners.delete(head);
            this.owners.set(head, hit);
            return hit;
        }
        const read = this.readCodeOwners(head).then((co) => {
            if (this.owners.get(head) === read)
                this.settled.set(head, co);
            return co;
        });
        this.owners.set(head, read);
        read.catch(() => {
            if (this.owners.get(head) === read)
                this.owners.delete(head);
        });
        if (this.owners.size > CODEOWNERS_CACHE) {
            const oldest = this.owners.keys().next().value;
            this.owners.delete(oldest);
            this.settled.delete(oldest);
        }
        return read;
    }
    async readCodeOwners(head) {
        const snap = this.store.snapshot(head);
        if (!snap)
            throw new NotFound(`snapshot ${head} is not present`);
        for (const path of CODEOWNERS_PATHS) {
            let tree = snap.root_tree_id;
            const parts = path.split('/');
            let blob = null;
            for (let i = 0; i < parts.length; i++) {
                const e = (await this.store.readTree(tree)).find((x) => x.name === parts[i]);
                if (!e)
                    break;
                if (i === parts.length - 1) {
                    if (e.kind === 'file' || e.kind === 'executable')
                        blob = e.id;
                }
                else if (e.kind === 'directory')
                    tree = e.id;
                else
                    break;
            }
            if (blob === null)
                continue;
            const size = this.store.locator('blob', blob)?.raw_length ?? 0;
            if (size > MAX_CODEOWNERS_BYTES)
                return { path, rules: [], problems: [{ line: 0, message: `the file is larger than ${MAX_CODEOWNERS_BYTES} bytes` }], problem_count: 1 };
            const bytes = await this.store.readObject('blob', blob);
            const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
            return parseCodeOwners(text, path);
        }
        return null;
    }
}
//# sourceMappingURL=rules-book.js.map