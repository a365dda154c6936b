// Prometheus metrics on a private registry (one per server, so tests can run several).
// Gauges are read from the scheduler at scrape time, so they can never drift.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Endpoint } from './responses.ts';

export type Outcome =
  | 'completed' // generated to the end
  | 'invalid' // 400 / 404 / 413
  | 'rejected_queue_full' // 429
  | 'unavailable' // 503: warming up, or queued when shutdown began
  | 'cancelled_queued' // client left before it got a slot
  | 'cancelled_running' // client left while holding a slot
  | 'aborted_shutdown' // still running when the shutdown grace period ended
  | 'error'; // 500

export type SlotState = { readonly slots: number; readonly busy: number; readonly queued: number };

export type MockMetrics = ReturnType<typeof createMetrics>;

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createMetrics(state: SlotState, options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  const registers = [registry];
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });

  new Gauge({
    name: 'modeldock_mock_queue_depth',
    help: 'Requests waiting for an execution slot.',
    registers,
    collect() {
      this.set(state.queued);
    },
  });
  new Gauge({
    name: 'modeldock_mock_slots_busy',
    help: 'Execution slots currently generating.',
    registers,
    collect() {
      this.set(state.busy);
    },
  });
  new Gauge({
    name: 'modeldock_mock_slots',
    help: 'Execution slots configured.',
    registers,
    collect() {
      this.set(state.slots);
    },
  });

  const requests = new Counter({
    name: 'modeldock_mock_requests_total',
    help: 'Completion requests by endpoint and outcome.',
    labelNames: ['endpoint', 'outcome'] as const,
    registers,
  });

  return {
    registry,
    tokens: new Counter({
      name: 'modeldock_mock_generated_tokens_total',
      help: 'Tokens generated (including those of requests later cancelled).',
      registers,
    }),
    queueWait: new Histogram({
      name: 'modeldock_mock_queue_wait_seconds',
      help: 'Time from arrival to getting an execution slot.',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    timeToFirstToken: new Histogram({
      name: 'modeldock_mock_time_to_first_token_seconds',
      help: 'Time from arrival to the first generated token (queue wait included).',
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    countRequest: (endpoint: Endpoint, outcome: Outcome): void => requests.inc({ endpoint, outcome }),
  };
}
