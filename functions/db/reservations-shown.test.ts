// What GET /requests/{id} shows of the stored last error and pod failure: a code and a message
// apart, printable and bounded, whoever wrote the row (this controller, an older one, an operator).
import { describe, expect, it } from 'vitest';
import type { Queryable, Row } from '../../ledger/db.ts';
import { AMOUNT_COLUMNS, RESOURCE_NAMES } from '../../ledger/resources.ts';
import { LAST_ERROR_MAX_CHARS } from '../../schema/tenant-errors.ts';
import { findById } from './reservations.ts';

const SPEC = { image: 'ghcr.io/acme/llm:1.0', replicas: 1, port: 8000, resources: { cpu: '500m', memory: '512Mi' }, env: [], args: [], readinessPath: '/healthz' };

function row(over: Row): Row {
  const r: Row = {
    id: '01HRESERVATION',
    tenant: 'acme',
    name: 'chat',
    state: 'delivered',
    spec: JSON.stringify(SPEC),
    generation: 1,
    applied_generation: 1,
    settled_generation: 1,
    c_from: null,
    request_id: 'req-1',
    request_hash: 'h',
    created_at: '2026-03-01 12:00:00.000',
    updated_at: '2026-03-01 12:00:00.000',
    state_changed_at: '2026-03-01 12:00:00.000',
    release_blocked_since: null,
    release_blocked_reason: null,
    release_blocked_pods: null,
    release_blocked_finalizers: null,
    last_error: null,
    b_namespace: null,
    dead_outbox: 0,
    next_attempt_at: null,
    retry_error: null,
    b_last_failure: null,
    ...over,
  };
  for (const res of RESOURCE_NAMES) r[AMOUNT_COLUMNS[res]] ??= 0;
  return r;
}

const read = async (over: Row) => {
  const q: Queryable = { execute: async () => ({ rows: [row(over)], rowsAffected: 0 }) };
  return (await findById(q, 'acme', '01HRESERVATION'))!.admission;
};

describe('the admission as read: lastError and lastErrorCode', () => {
  it('none: both null', async () => {
    expect(await read({})).toMatchObject({ lastError: null, lastErrorCode: null });
  });

  it("a coded text: the code and the message apart; a pending row's error before the reservation's", async () => {
    expect(await read({ last_error: 'NeverReady: never Ready within 30000 ms of its creation' })).toMatchObject({
      lastError: 'never Ready within 30000 ms of its creation',
      lastErrorCode: 'NeverReady',
    });
    expect(await read({ last_error: 'NeverReady: x', retry_error: 'ClusterError: the Kubernetes API answered 503 ServiceUnavailable' })).toMatchObject({
      lastError: 'the Kubernetes API answered 503 ServiceUnavailable',
      lastErrorCode: 'ClusterError',
    });
  });

  it('a text without a code (an operator, an older controller): Unclassified, printable and bounded', async () => {
    const a = await read({ last_error: `resolved by an operator (keep): \u001b[2Jdisputed${'!'.repeat(5000)}` });
    expect(a.lastErrorCode).toBe('Unclassified');
    expect(a.lastError).toMatch(/^resolved by an operator \(keep\): \[2Jdisputed!+$/);
    expect(Array.from(a.lastError ?? '')).toHaveLength(LAST_ERROR_MAX_CHARS);
  });
});

describe('the admission as read: lastFailure', () => {
  it('a stored failure with control characters (written by an older controller) is shown printable', async () => {
    const stored = JSON.stringify({ reason: 'CrashLoopBackOff', message: 'weights\u001b[31m corrupt\u009b', pod: 'md-1', container: 'model', exitCode: 3 });
    expect((await read({ b_last_failure: stored })).lastFailure).toEqual({ reason: 'CrashLoopBackOff', message: 'weights[31m corrupt', pod: 'md-1', container: 'model', exitCode: 3 });
  });
});
