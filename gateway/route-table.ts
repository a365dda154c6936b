// The routes of the EndpointSlices an informer holds. An event only marks the table stale; it is
// recomputed on the next read (a request, or the scraper's round every SCRAPE_INTERVAL_MS), so the
// initial list's thousands of 'add' events cost one computation, not one each. Every computation
// tells the metrics which admissions still have a route, and says once why a slice is ignored.
// Requests waiting for a ready endpoint (endpoint-wait.ts) hear of the next change: the first event
// wakes every waiter and empties the set, so the rest of a burst finds nobody to wake.
import { LABELS, MANAGED_BY } from '../schema/model-service.ts';
import type { Informer } from '../controller/runtime/informer.ts';
import type { Logger } from '../controller/runtime/log.ts';
import { ChangeNotice } from './change-notice.ts';
import { routesFrom, type EndpointSlice, type IgnoreReason, type Route } from './routes.ts';

/** The EndpointSlices of ModelDock's Services that name an admission (and the installation's, with INSTANCE). */
export function sliceSelector(instance: string | undefined): string {
  return [`${LABELS.managedBy}=${MANAGED_BY}`, LABELS.admissionId, ...(instance ? [`${LABELS.instance}=${instance}`] : [])].join(',');
}

export type SliceSource = Pick<Informer<EndpointSlice>, 'addHandlers' | 'list' | 'synced'>;

export interface RouteTableOptions {
  slices: SliceSource;
  prefix: string;
  log: Logger;
  /** After every computation: the admissions with a route, and the ignored slices by reason. */
  onComputed?: (routes: ReadonlyMap<string, Route>, ignored: Readonly<Record<IgnoreReason, number>>) => void;
}

export class RouteTable {
  readonly #opts: RouteTableOptions;
  #routes: ReadonlyMap<string, Route> = new Map();
  #stale = true;
  /** Slices ignored at the last computation (namespace/name: reason), each logged when it started to be. */
  #ignored = new Map<string, IgnoreReason>();
  /** Requests waiting for the next change. */
  readonly #change = new ChangeNotice();

  constructor(opts: RouteTableOptions) {
    this.#opts = opts;
    const stale = () => {
      this.#stale = true;
      this.#change.notify();
    };
    opts.slices.addHandlers({ add: stale, update: stale, delete: stale });
  }

  /** Resolves at the next change of the slices (read table() again), or at once when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    return this.#change.next(signal);
  }

  get synced(): boolean {
    return this.#opts.slices.synced;
  }

  table(): ReadonlyMap<string, Route> {
    if (this.#stale) this.#compute();
    return this.#routes;
  }

  #compute(): void {
    this.#stale = false;
    const ignored = new Map<string, IgnoreReason>();
    const counts: Record<IgnoreReason, number> = { missing_labels: 0, foreign_namespace: 0, conflicting_tenant: 0 };
    this.#routes = routesFrom(this.#opts.slices.list(), this.#opts.prefix, (s) => {
      const key = `${s.namespace}/${s.name}`;
      ignored.set(key, s.reason);
      counts[s.reason] += 1;
      if (this.#ignored.get(key) !== s.reason) this.#opts.log.warn('EndpointSlice ignored', { namespace: s.namespace, slice: s.name, reason: s.reason });
    });
    this.#ignored = ignored;
    this.#opts.onComputed?.(this.#routes, counts);
  }
}
