// What GET /requests/{id} shows of the stored last error and pod failure: a code and a message
// apart, printable and bounded, whoever wrote the row (this controller, an older one, an operator).
import { describe, expect, it } from 'vitest';
import type { Queryable, Row } from '../../ledger/db.ts';
import { LAST_ERROR_MAX_CHARS } from '../../schema/tenant-errors.ts';
import { admissionRow } from '../test-ledger.ts';
import { findById } from './reservations.ts';

const read = async (over: Row) => {
  const q: Queryable = { execute: async () => ({ rows: [admissionRow(over)], rowsAffected: 0 }) };
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
