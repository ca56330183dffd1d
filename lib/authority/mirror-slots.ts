// The push slots git mirrors of every repository share (docs/git.md "Mirror", "When it pushes"):
// at most `total` pushes at once over the server, at most `perRepository` of them for one
// repository, and a freed slot goes to the repository served least recently among those with
// a push waiting (round robin), so one repository's slow or silent remotes never hold every
// slot while another repository waits.

export class MirrorSlots {
  private running = 0;
  private readonly runningOf = new Map<number, number>();
  /** Waiting starts per repository, oldest first. */
  private readonly waiting = new Map<number, (() => void)[]>();
  /** When each repository was last given a slot (a counter); never: first, by arrival. */
  private readonly servedAt = new Map<number, number>();
  private served = 0;

  constructor(readonly total: number, readonly perRepository: number) {
    if (!(total >= 1) || !(perRepository >= 1)) throw new Error('mirror slots: total and per-repository must be at least 1');
  }

  /** Run `fn` in a slot of repository `repo` once one is free and it is the repository's turn. */
  run<T>(repo: number, fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        this.running++;
        this.runningOf.set(repo, (this.runningOf.get(repo) ?? 0) + 1);
        let done: Promise<T>;
        try {
          done = fn();
        } catch (err) {
          done = Promise.reject(err);
        }
        done.then(resolve, reject).finally(() => {
          this.running--;
          const n = (this.runningOf.get(repo) ?? 1) - 1;
          if (n > 0) this.runningOf.set(repo, n);
          else this.runningOf.delete(repo);
          this.pump();
        });
      };
      const queue = this.waiting.get(repo);
      if (queue) queue.push(start);
      else this.waiting.set(repo, [start]);
      this.pump();
    });
  }

  /** Pushes running now (all, or of one repository). */
  inFlight(repo?: number): number {
    return repo === undefined ? this.running : this.runningOf.get(repo) ?? 0;
  }

  private pump(): void {
    while (this.running < this.total) {
      // The waiting repository under its share that was served least recently (Map order: arrival).
      let repo: number | null = null;
      let best = Infinity;
      for (const r of this.waiting.keys()) {
        if ((this.runningOf.get(r) ?? 0) >= this.perRepository) continue;
        const at = this.servedAt.get(r) ?? -1;
        if (at < best) {
          best = at;
          repo = r;
        }
      }
      if (repo === null) return;
      const queue = this.waiting.get(repo)!;
      const start = queue.shift()!;
      if (!queue.length) this.waiting.delete(repo);
      this.servedAt.set(repo, this.served++);
      start();
    }
  }
}
