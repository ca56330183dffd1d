// The push slots git mirrors of every repository share (docs/git.md "Mirror", "When it pushes"):
// at most `total` pushes at once over the server, at most `perRepository` of them for one
// repository, and a freed slot goes to the repository served least recently among those with
// a push waiting (round robin), so one repository's slow or silent remotes never hold every
// slot while another repository waits.
export class MirrorSlots {
    total;
    perRepository;
    running = 0;
    runningOf = new Map();
    /** Waiting starts per repository, oldest first. */
    waiting = new Map();
    /** When each repository was last given a slot (a counter); never: first, by arrival. */
    servedAt = new Map();
    served = 0;
    constructor(total, perRepository) {
        this.total = total;
        this.perRepository = perRepository;
        if (!(total >= 1) || !(perRepository >= 1))
            throw new Error('mirror slots: total and per-repository must be at least 1');
    }
    /** Run `fn` in a slot of repository `repo` once one is free and it is the repository's turn. */
    run(repo, fn) {
        return new Promise((resolve, reject) => {
            const start = () => {
                this.running++;
                this.runningOf.set(repo, (this.runningOf.get(repo) ?? 0) + 1);
                let done;
                try {
                    done = fn();
                }
                catch (err) {
                    done = Promise.reject(err);
                }
                done.then(resolve, reject).finally(() => {
                    this.running--;
                    const n = (this.runningOf.get(repo) ?? 1) - 1;
                    if (n > 0)
                        this.runningOf.set(repo, n);
                    else
                        this.runningOf.delete(repo);
                    this.pump();
                });
            };
            const queue = this.waiting.get(repo);
            if (queue)
                queue.push(start);
            else
                this.waiting.set(repo, [start]);
            this.pump();
        });
    }
    /** Pushes running now (all, or of one repository). */
    inFlight(repo) {
        return repo === undefined ? this.running : this.runningOf.get(repo) ?? 0;
    }
    pump() {
        while (this.running < this.total) {
            // The waiting repository under its share that was served least recently (Map order: arrival).
            let repo = null;
            let best = Infinity;
            for (const r of this.waiting.keys()) {
                if ((this.runningOf.get(r) ?? 0) >= this.perRepository)
                    continue;
                const at = this.servedAt.get(r) ?? -1;
                if (at < best) {
                    best = at;
                    repo = r;
                }
            }
            if (repo === null)
                return;
            const queue = this.waiting.get(repo);
            const start = queue.shift();
            if (!queue.length)
                this.waiting.delete(repo);
            this.servedAt.set(repo, this.served++);
            start();
        }
    }
}
//# sourceMappingURL=mirror-slots.js.map