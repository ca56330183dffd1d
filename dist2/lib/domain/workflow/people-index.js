// Per person, the changes they own and the changes they were asked to review (change
// sequences), kept in memory so a person's dashboard (docs/api.md "People") reads only that
// person's changes, never every change. Derived from the change records' `owner` and
// `reviewers` fields; saved as a checkpoint section (storage-layout.md §17.1) and rebuilt from
// the change records when the section is missing. It changes when a per-person list is added.
/** The section of workflow.ckpt (storage-layout.md §17.1). */
export const PEOPLE_SECTION = 'workflow-people';
export class PeopleIndex {
    owned = new Map();
    reviewing = new Map();
    /** A change record committed (idempotent: a person is never taken off a list). */
    apply(c) {
        if (c.owner)
            add(this.owned, c.owner, c.sequence);
        for (const r of c.reviewers ?? [])
            if (r.kind === 'person')
                add(this.reviewing, r.name, c.sequence);
    }
    /** Change sequences `name` owns, newest first. */
    ownedBy(name) {
        return [...(this.owned.get(name) ?? [])].sort((a, b) => b - a);
    }
    /** Change sequences `name` was asked to review, newest first. */
    reviewedBy(name) {
        return [...(this.reviewing.get(name) ?? [])].sort((a, b) => b - a);
    }
    /**
     * The section: JSON `{"owned": {name: [seq...]}, "reviewing": {name: [seq...]}}` (UTF-8),
     * names in code-unit order and sequences ascending, so equal indexes encode to equal bytes
     * (fsck compares the section with one rebuilt from the records).
     */
    encode() {
        const obj = (m) => Object.fromEntries([...m.keys()].sort().map((k) => [k, [...m.get(k)].sort((a, b) => a - b)]));
        return Buffer.from(JSON.stringify({ owned: obj(this.owned), reviewing: obj(this.reviewing) }), 'utf8');
    }
    /** The index of a section; throws when it does not decode or names a change beyond `changeCount`. */
    static decode(buf, changeCount) {
        const x = new PeopleIndex();
        const parsed = JSON.parse(buf.toString('utf8'));
        for (const [field, map] of [['owned', x.owned], ['reviewing', x.reviewing]]) {
            const o = parsed[field];
            if (!o || typeof o !== 'object' || Array.isArray(o))
                throw new Error(`people section: ${field} is not an object`);
            for (const [name, seqs] of Object.entries(o)) {
                if (!Array.isArray(seqs) || !seqs.every((s) => Number.isInteger(s) && s >= 1 && s <= changeCount))
                    throw new Error(`people section: ${field} of a person names a change that does not exist`);
                map.set(name, new Set(seqs));
            }
        }
        return x;
    }
}
/** The index of every change record (fsck's rebuild). */
export function rebuildPeople(changes) {
    const x = new PeopleIndex();
    for (const c of changes)
        x.apply(c);
    return x;
}
function add(m, name, seq) {
    let s = m.get(name);
    if (!s)
        m.set(name, (s = new Set()));
    s.add(seq);
}
//# sourceMappingURL=people-index.js.map