// Reading columns as @planetscale/database casts them: BIGINT/DECIMAL/COUNT/SUM → string,
// INT32 → number, TINYINT(1) → 0/1, DATETIME(3) → 'YYYY-MM-DD hh:mm:ss.sss' (UTC),
// JSON → object on MySQL 8 but string on MariaDB (LONGTEXT).
import { failureSchema, type Failure } from '../schema/model-service.ts';

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
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** binding.last_failure is VARCHAR(4096): characters, after JSON's escaping. */
export const FAILURE_COLUMN_CHARS = 4096;

/**
 * A pod failure as the JSON binding.last_failure stores, its message cut so the whole fits the
 * column whatever the message holds (a tenant's termination message of quotes or control
 * characters grows up to sixfold when escaped). The longest prefix that fits is kept.
 */
export function failureColumn(f: Failure, max = FAILURE_COLUMN_CHARS): string {
  const encode = (n: number) => JSON.stringify({ ...f, message: f.message.slice(0, n) });
  if (encode(f.message.length).length <= max) return encode(f.message.length);
  let lo = 0;
  let hi = f.message.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (encode(mid).length <= max) lo = mid;
    else hi = mid - 1;
  }
  return encode(lo);
}
