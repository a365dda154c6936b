// Status hold: a rollout's in-between step that is not news (reconcile.ts newsworthy(): the first
// rollout's Pending and Progressing steps, a later rollout's steps after its first Progressing) is
// not written while the children's next report is on its way, so a new ModelService's steps cost
// one status write, not one each. Bounded per phase, counted from the key's first held change:
//   Pending      the Deployment controller has not reported on the new Deployment: its report
//                is certain to come and overwrites what was seen meanwhile (pods scheduled,
//                started, listed ready by the EndpointSlice controller) — up to `pendingMs`;
//   Progressing  pods being scheduled, started, listed — up to `progressingMs`, like the
//                EndpointSlice controller's `--endpointslice-updates-batch-period`.
// Never held: news (Running, Degraded, Terminating, a fall back from Running: written at once) and
// a status equal to the stored one (nothing to write; a held change is dropped). A held key is
// requeued for the end of its bound, so no report is needed for the write to happen: a held step
// is at most its bound late. In memory only: a restarted or new leader writes what it sees at once.
import type { Phase } from '../../schema/model-service.ts';

export interface StatusHoldOptions {
  pendingMs: number;
  progressingMs: number;
  /** Monotonic milliseconds. */
  now?: () => number;
}

export class StatusHold {
  /** Per key: when its first held status was computed. */
  readonly #since = new Map<string, number>();
  readonly #bound: Partial<Record<Phase, number>>;
  readonly #now: () => number;

  constructor({ pendingMs, progressingMs, now = () => performance.now() }: StatusHoldOptions) {
    this.#bound = { Pending: pendingMs, Progressing: progressingMs };
    this.#now = now;
  }

  /**
   * How long to hold a changed status of `key` whose phase is `phase`: > 0 to hold it that many
   * ms more (requeue then), 0 to write it now.
   */
  holdMs(key: string, phase: Phase | undefined): number {
    const bound = (phase && this.#bound[phase]) ?? 0;
    if (bound <= 0) return this.release(key);
    const now = this.#now();
    const since = this.#since.get(key) ?? now;
    const left = since + bound - now;
    if (left <= 0) return this.release(key);
    this.#since.set(key, since);
    return Math.ceil(left);
  }

  /** Nothing held for `key` any more (written, unchanged, or gone). Always 0. */
  release(key: string): 0 {
    this.#since.delete(key);
    return 0;
  }

  /** Keys with a held status. */
  get size(): number {
    return this.#since.size;
  }
}
