// One at a time per key, in arrival order: the per-repository git lock (worktree add/remove,
// snapshots, landing a patch, reverting writes outside a scope must not interleave in one
// repository, while different repositories go on in parallel). A p-queue of concurrency 1 per key,
// dropped when it goes idle, so a long run over many repositories keeps no queue per repository.
import PQueue from 'p-queue';

export class KeyedLock {
  private readonly queues = new Map<string, PQueue>();

  /** Runs `fn` once every earlier call for `key` has settled (a failed one does not block the next). */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let q = this.queues.get(key);
    if (!q) {
      const queue = new PQueue({ concurrency: 1 });
      queue.on('idle', () => {
        if (this.queues.get(key) === queue) this.queues.delete(key);
      });
      this.queues.set(key, queue);
      q = queue;
    }
    return q.add(fn);
  }

  /** Keys with work queued or running. */
  get size(): number {
    return this.queues.size;
  }
}
