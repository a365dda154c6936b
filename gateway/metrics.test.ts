import { describe, expect, it } from 'vitest';
import { metricValue, parsePrometheus } from '../schema/prom-text.ts';
import { GatewayMetrics } from './metrics.ts';

const A = { tenant: 'acme', admission: '01JABCDEFGHJKMNPQRSTVWXYZ0' };
const samples = async (m: GatewayMetrics) => parsePrometheus(await m.registry.metrics());
const series = async (m: GatewayMetrics, admission: string) => (await samples(m)).filter((s) => s.labels.admission === admission).map((s) => s.name);

describe('GatewayMetrics', () => {
  it('counts a request\'s status, tokens, first token and rate under its tenant and admission', async () => {
    const m = new GatewayMetrics();
    m.requestStarted(A);
    expect(metricValue(await samples(m), 'modeldock_gateway_inflight', A)).toBe(1);
    m.requestEnded(A, 200, { started: true, ttftSeconds: 0.2, tokens: 5, tokensPerSecond: 40 });
    const s = await samples(m);
    expect(metricValue(s, 'modeldock_gateway_inflight', A)).toBe(0);
    expect(metricValue(s, 'modeldock_gateway_requests_total', { ...A, code: '200' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_tokens_total', A)).toBe(5);
    expect(metricValue(s, 'modeldock_gateway_time_to_first_token_seconds_count', A)).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_time_to_first_token_seconds_sum', A)).toBe(0.2);
    expect(metricValue(s, 'modeldock_gateway_tokens_per_second_sum', A)).toBe(40);
  });

  it('removes an admission\'s series once its route is gone, after its last request ended', async () => {
    const m = new GatewayMetrics();
    m.retain(new Set([A.admission]));
    m.requestStarted(A);
    m.requestEnded(A, 503, { started: false, tokens: 0 });
    m.requestEnded(A, 200, { started: true, tokens: 1 });
    m.requestStarted(A);
    m.retain(new Set());
    expect(await series(m, A.admission)).toContain('modeldock_gateway_inflight'); // one still in flight
    m.requestEnded(A, 200, { started: true, tokens: 2, ttftSeconds: 0.1 });
    expect(await series(m, A.admission)).toEqual([]);
  });

  it('keeps what reached no route under admission "" (401, 404)', async () => {
    const m = new GatewayMetrics();
    m.retain(new Set());
    m.requestEnded({ tenant: '', admission: '' }, 401, { started: false, tokens: 0 });
    m.requestEnded({ tenant: 'acme', admission: '' }, 404, { started: false, tokens: 0 });
    m.retain(new Set());
    const s = await samples(m);
    expect(metricValue(s, 'modeldock_gateway_requests_total', { tenant: '', admission: '', code: '401' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_requests_total', { tenant: 'acme', admission: '', code: '404' })).toBe(1);
  });

  it('counts rejections, picks, connect errors, scrapes and ignored slices', async () => {
    const m = new GatewayMetrics();
    m.rejected('expired');
    m.rejected('missing');
    m.picked('metrics');
    m.picked('inflight');
    m.connectFailed();
    m.scraped('error');
    m.ignoredSlices({ missing_labels: 0, foreign_namespace: 2, conflicting_tenant: 0 });
    const s = await samples(m);
    expect(metricValue(s, 'modeldock_gateway_credential_rejections_total', { reason: 'expired' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_credential_rejections_total', { reason: 'missing' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_picks_total', { source: 'metrics' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_upstream_connect_errors_total')).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_scrapes_total', { result: 'error' })).toBe(1);
    expect(metricValue(s, 'modeldock_gateway_ignored_endpointslices', { reason: 'foreign_namespace' })).toBe(2);
  });
});

describe('GatewayMetrics: endpoint load', () => {
  it('reads every endpoint\'s load at each scrape; an endpoint no longer read has no series', async () => {
    const m = new GatewayMetrics();
    let samplesNow = [
      { ...A, pod: 'p1', address: '10.0.0.1', load: 2 },
      { ...A, pod: 'p2', address: '10.0.0.2', load: 0 },
    ];
    m.readEndpointLoadsFrom(() => samplesNow);
    const loadsOf = async () => (await samples(m)).filter((s) => s.name === 'modeldock_gateway_endpoint_load').map((s) => [s.labels, s.value]);
    expect(await loadsOf()).toEqual([
      [{ ...A, pod: 'p1', address: '10.0.0.1' }, 2],
      [{ ...A, pod: 'p2', address: '10.0.0.2' }, 0],
    ]);
    samplesNow = [{ ...A, pod: 'p2', address: '10.0.0.2', load: 3 }];
    expect(await loadsOf()).toEqual([[{ ...A, pod: 'p2', address: '10.0.0.2' }, 3]]);
  });

  it('none before a source is set', async () => {
    const m = new GatewayMetrics();
    expect((await samples(m)).filter((s) => s.name === 'modeldock_gateway_endpoint_load')).toEqual([]);
  });
});
