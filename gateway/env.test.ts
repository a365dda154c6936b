import { describe, expect, it } from 'vitest';
import { DEFAULT_LOAD_METRICS, parseEnv } from './env.ts';

describe('gateway environment', () => {
  it('has the documented defaults', () => {
    const r = parseEnv({});
    expect(r).toEqual({
      ok: true,
      env: {
        PORT: 8080,
        METRICS_PORT: 9090,
        MAX_BODY_BYTES: 1 << 20,
        TENANT_NAMESPACE_PREFIX: 'md-',
        CREDENTIAL_KEYS_DIR: '/etc/modeldock/gateway-keys',
        BALANCE: 'least-load',
        SCRAPE_INTERVAL_MS: 500,
        METRICS_STALE_MS: 2000,
        LOAD_METRICS: DEFAULT_LOAD_METRICS,
        UPSTREAM_CONNECT_TIMEOUT_MS: 5000,
        UPSTREAM_HEADERS_TIMEOUT_MS: 120_000,
        UPSTREAM_IDLE_TIMEOUT_MS: 60_000,
        REQUEST_TIMEOUT_MS: 900_000,
        ENDPOINT_WAIT_MS: 5000,
        SHUTDOWN_GRACE_MS: 25_000,
        LOG_LEVEL: 'info',
      },
    });
    expect(DEFAULT_LOAD_METRICS).toEqual(['modeldock_mock_slots_busy', 'modeldock_mock_queue_depth', 'vllm:num_requests_running', 'vllm:num_requests_waiting']);
  });

  it('reads the settings given, an empty one as unset', () => {
    const r = parseEnv({ PORT: '9000', BALANCE: 'round-robin', LOAD_METRICS: ' a_b , vllm:x ,', INSTANCE: 'blue', KUBECONFIG: '', LOG_LEVEL: '', ENDPOINT_WAIT_MS: '0' });
    expect(r.ok && r.env).toMatchObject({ PORT: 9000, BALANCE: 'round-robin', LOAD_METRICS: ['a_b', 'vllm:x'], INSTANCE: 'blue', LOG_LEVEL: 'info', ENDPOINT_WAIT_MS: 0 });
    expect(r.ok && r.env.KUBECONFIG).toBeUndefined();
  });

  it('names every bad variable once, with why', () => {
    const r = parseEnv({ PORT: 'x', METRICS_PORT: '70000', BALANCE: 'fastest', TENANT_NAMESPACE_PREFIX: 'MD_', LOAD_METRICS: 'ok,not a name', INSTANCE: 'Blue', SCRAPE_INTERVAL_MS: '10', ENDPOINT_WAIT_MS: '-1' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.invalid).sort()).toEqual(['BALANCE', 'ENDPOINT_WAIT_MS', 'INSTANCE', 'LOAD_METRICS', 'METRICS_PORT', 'PORT', 'SCRAPE_INTERVAL_MS', 'TENANT_NAMESPACE_PREFIX']);
    expect(r.invalid.LOAD_METRICS).toMatch(/Prometheus metric name/);
    expect(r.invalid.TENANT_NAMESPACE_PREFIX).toMatch(/lower-case/);
  });
});
