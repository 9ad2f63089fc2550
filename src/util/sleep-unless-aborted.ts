// One abortable wait, shared by every retry loop (the provider's request retries and the session's
// turn retries): a wait that a cancel cuts short, so Ctrl-C or a stopped run never sits out a backoff.

/** Sleeps `ms`; resolves false at once when `signal` aborts (before or during the wait), true otherwise. */
export function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
