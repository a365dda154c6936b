// The autoscaler's metrics, in the Manager's registry.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface AutoscaleMetrics {
  decisions: Counter<'reason'>;
  changes: Counter<'direction' | 'grant'>;
  quotaRefusals: Counter;
  scrapeErrors: Counter;
  errors: Counter;
  panicking: Gauge;
  metricsUnavailable: Gauge;
}

export function autoscaleMetrics(registry: Registry): AutoscaleMetrics {
  const registers = [registry];
  return {
    decisions: new Counter({
      name: 'modeldock_autoscale_decisions_total',
      help: 'Autoscaler decisions (one per autoscaled admission per tick), by reason (scale-up, scale-down, panic-scale-up, within-tolerance, stabilizing, panic-hold, rate-limited, metrics-unavailable, metrics-fallback, out-of-range, steady).',
      labelNames: ['reason'],
      registers,
    }),
    changes: new Counter({
      name: 'modeldock_autoscale_changes_total',
      help: 'Changes of replicas the autoscaler committed to the ledger, by direction (up: charged first | down: refunded once the pods are gone) and grant (full | partial: the quota allowed less).',
      labelNames: ['direction', 'grant'],
      registers,
    }),
    quotaRefusals: new Counter({ name: 'modeldock_autoscale_quota_refusals_total', help: 'Scale-ups the quota refused entirely (QuotaLimited, nothing charged).', registers }),
    scrapeErrors: new Counter({ name: 'modeldock_autoscale_scrape_errors_total', help: 'Pod /metrics reads that failed (timeout, HTTP error, unreadable).', registers }),
    errors: new Counter({ name: 'modeldock_autoscale_errors_total', help: 'Autoscale steps that failed (the ledger unreachable, …); retried on the next tick.', registers }),
    panicking: new Gauge({ name: 'modeldock_autoscale_panic', help: 'Autoscaled admissions in panic mode now.', registers }),
    metricsUnavailable: new Gauge({ name: 'modeldock_autoscale_metrics_unavailable', help: 'Autoscaled admissions whose load cannot be read now (held where they are).', registers }),
  };
}
