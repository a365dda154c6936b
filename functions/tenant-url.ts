// The URLs a tenant is given, built where a response is (the ledger holds no URLs): the base is
// PUBLIC_URL when the operator set it (the Worker behind a proxy or on a custom domain), else the
// origin the request came to. An admission's `endpoint` is its model's URL at that base once its
// ModelService is bound and running (delivered, ready); null before, and from the delete on.
import type { Admission } from '../schema/api.ts';
import type { AdmissionRecord } from './db/reservations.ts';

const SERVING_STATES: ReadonlySet<string> = new Set(['delivered', 'ready']);

/** PUBLIC_URL, or the origin of the request (no trailing slash either way). */
export const publicBase = (publicUrl: string | undefined, requestUrl: string): string => publicUrl ?? new URL(requestUrl).origin;

/** Where the tenant calls admission `id`'s model: POST `${…}/chat/completions` or `${…}/completions`. */
export const modelUrl = (base: string, id: string): string => `${base}/v1/models/${id}`;

/** The admission as the API shows it: the record and its tenant-facing endpoint. */
export function shown(a: AdmissionRecord, base: string): Admission {
  return { ...a, endpoint: a.binding !== null && SERVING_STATES.has(a.state) ? modelUrl(base, a.id) : null };
}
