// A service call that must be refused, and the API error it was refused with.
import { expect } from 'vitest';
import { toApiError, type ApiError } from '../../functions/errors.ts';

/** The API error a service call was refused with, as the Worker would render it (the test fails when the call succeeds). */
export async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  return toApiError(err);
}
