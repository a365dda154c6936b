// A readiness check with a deadline, whose answer is cached for a few seconds: /readyz is
// polled by the kubelet (and load balancers), and must neither hammer a dependency nor hang.
// Concurrent callers share one in-flight probe.

export interface ReadyResult {
  ok: boolean;
  /** Short and free of secrets: served on the open /readyz. */
  reason?: string;
  /** The error, for logs only. */
  detail?: string;
}

export interface CachedCheckOptions {
  /** How long an answer is reused (default 5 s). */
  ttlMs?: number;
  /** A probe slower than this counts as failed (default 2 s). */
  timeoutMs?: number;
  now?: () => number;
}

export type ReadyCheck = () => Promise<ReadyResult>;

export function cachedCheck(name: string, probe: () => Promise<unknown>, o: CachedCheckOptions = {}): ReadyCheck {
  const now = o.now ?? Date.now;
  const ttl = o.ttlMs ?? 5000;
  const timeoutMs = o.timeoutMs ?? 2000;
  let last: { result: ReadyResult; at: number } | undefined;
  let inflight: Promise<ReadyResult> | undefined;

  const run = async (): Promise<ReadyResult> => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      await Promise.race([probe(), deadline]);
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: `${name} did not answer`, detail: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  };

  return async () => {
    if (last && now() - last.at < ttl) return last.result;
    inflight ??= run().then((result) => {
      last = { result, at: now() };
      inflight = undefined;
      return result;
    });
    return inflight;
  };
}
