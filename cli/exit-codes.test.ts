import { describe, expect, it } from 'vitest';
import { EXIT, exitForApiError } from './exit-codes.ts';

describe('exitForApiError', () => {
  it.each([
    [409, 'quota_exceeded', EXIT.quotaExceeded],
    [409, 'conflict', EXIT.conflict],
    [409, 'change_pending', EXIT.conflict],
    // Replicas alone for an admission that autoscales: change its autoscale instead.
    [409, 'autoscaled', EXIT.conflict],
    [409, 'model_not_ready', EXIT.conflict],
    [404, 'not_found', EXIT.notFound],
    [401, 'unauthorized', EXIT.unauthorized],
    // Refused before anything was done, and the same request works later: like a 503, not a usage error.
    [429, 'rate_limited', EXIT.unavailable],
    [429, '', EXIT.unavailable],
    [503, 'model_unavailable', EXIT.unavailable],
    [502, 'gateway_error', EXIT.unavailable],
    [504, 'gateway_timeout', EXIT.unavailable],
    [400, 'bad_request', EXIT.usage],
    [422, 'validation_failed', EXIT.usage],
    [302, '', EXIT.error],
  ])('HTTP %i %s → exit %i', (status, code, exit) => expect(exitForApiError(status, code)).toBe(exit));
});
