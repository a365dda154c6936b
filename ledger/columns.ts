// Reading columns as @planetscale/database casts them: BIGINT/DECIMAL/COUNT/SUM → string,
// INT32 → number, TINYINT(1) → 0/1, DATETIME(3) → 'YYYY-MM-DD hh:mm:ss.sss' (UTC),
// JSON → object on MySQL 8 but string on MariaDB (LONGTEXT).
import { failureSchema, type Failure } from '../schema/model-service.ts';
import { fitSerialized, printable, printableWithin } from '../schema/text.ts';

export function int(v: unknown): number {
  if (v === null || v === undefined) return 0;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`not a safe integer: ${String(v)}`);
  return n;
}

export function str(v: unknown): string {
  if (typeof v !== 'string') throw new Error(`not a string: ${String(v)}`);
  return v;
}

export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));
export const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : int(v));

export const bool = (v: unknown): boolean => v === 1 || v === '1' || v === true;

export function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : v;
}

/** A TEXT column holding a JSON array of strings (e.g. release_blocked_pods), or NULL. */
export const stringListOrNull = (v: unknown): string[] | null => (v === null || v === undefined || v === '' ? null : (JSON.parse(str(v)) as string[]));

/** DATETIME(3) text (UTC) → RFC 3339 with Z. */
export function time(v: unknown): string {
  const s = str(v);
  const [date, clock = '00:00:00'] = s.split(' ');
  const [hms = '00:00:00', ms = ''] = clock.split('.');
  return `${date}T${hms}.${ms.padEnd(3, '0').slice(0, 3)}Z`;
}

export const timeOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : time(v));

/** A pod failure stored as JSON (binding.last_failure, written by the controller); a value that does not parse reads as none. */
export function failureOrNull(v: unknown): Failure | null {
  if (v === null || v === undefined) return null;
  try {
    const parsed = failureSchema.safeParse(json(v));
    return parsed.success ? printableFailure(parsed.data) : null;
  } catch {
    return null;
  }
}

/** binding.last_failure is VARCHAR(4096) in utf8mb4: characters (code points), counted after JSON's escaping. */
export const FAILURE_COLUMN_CHARS = 4096;

/** The failure with `f` applied to each of its texts. */
const mapTexts = (x: Failure, f: (key: string, text: string) => string): Failure =>
  Object.fromEntries(Object.entries(x).map(([k, v]) => [k, typeof v === 'string' ? f(k, v) : v])) as Failure;

/** Every text of a failure printable: a row written by an older controller may hold control characters. */
const printableFailure = (x: Failure): Failure => mapTexts(x, (_, v) => printable(v));

/**
 * A pod failure as the JSON binding.last_failure stores: printable (schema/text.ts), its message
 * cut so the whole JSON fits the column whatever the message holds (a tenant's termination
 * message of quotes doubles when escaped), counted in characters as MySQL counts them. The
 * longest prefix that fits is kept. The other fields are short by construction (a reason code,
 * Kubernetes names, a time) and bounded here all the same, so the frame always fits.
 */
export function failureColumn(f: Failure, max = FAILURE_COLUMN_CHARS): string {
  const frame = mapTexts(f, (k, v) => (k === 'message' ? v : printableWithin(v, k === 'reason' ? 64 : 253)));
  return fitSerialized(f.message, (message) => JSON.stringify({ ...frame, message }), { max, unit: 'characters' });
}
