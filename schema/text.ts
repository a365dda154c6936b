// Text that a tenant or a registry controls (a container's termination message, an image pull
// error, a policy's refusal) made safe to store and to show:
//   printable()       control characters out, lone surrogates replaced — safe on a terminal
//   fitSerialized()   the longest prefix whose serialization (what the column receives, e.g. JSON
//                     that escapes `"` as `\"`) fits the column, counted as MySQL counts it
//   printableWithin() printable() cut to a number of characters
// Pure and imports nothing: the CLI and the page use it too (the page as /assets/text.js).

/**
 * C0 controls (U+0000–U+001F), DEL (U+007F), C1 controls (U+0080–U+009F: U+009B is a CSI to a
 * terminal, like ESC [), and the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069), which reorder what a terminal or a page shows.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** Controls that separate words (tab, line feed, vertical tab, form feed, carriage return, NEL): a space instead, so words stay apart. */
const SEPARATORS = /[\t\n\v\f\r\u0085]/g;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` without control characters (word-separating ones become a space) and with every lone surrogate replaced by U+FFFD. */
export function printable(s: string): string {
  return s.replace(LONE_SURROGATE, '\ufffd').replace(SEPARATORS, ' ').replace(CONTROLS, '');
}

/** How MySQL counts a value against a utf8mb4 column: VARCHAR(n) in characters (code points), TEXT and BLOB types in bytes. */
export type Counted = 'characters' | 'bytes';

export interface ColumnLimit {
  max: number;
  unit: Counted;
}

const encoder = new TextEncoder();

/** The length of `s` as MySQL counts it in a utf8mb4 column. */
export function mysqlLength(s: string, unit: Counted): number {
  if (unit === 'bytes') return encoder.encode(s).length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The serialization of the longest printable prefix of `text` (whole code points) that fits
 * `limit`: `serialize` is what the column receives, so escaping that makes the text longer (JSON
 * writes `"` as `\"`) is counted. A serialization grows with the prefix, so the prefix is found by
 * bisection. Throws RangeError when not even the empty text fits (the caller's frame is too big).
 */
export function fitSerialized(text: string, serialize: (prefix: string) => string, limit: ColumnLimit): string {
  const points = Array.from(printable(text));
  const encode = (n: number) => serialize(points.slice(0, n).join(''));
  const fits = (s: string) => mysqlLength(s, limit.unit) <= limit.max;
  const whole = encode(points.length);
  if (fits(whole)) return whole;
  if (!fits(encode(0))) throw new RangeError(`not even an empty text fits ${limit.max} ${limit.unit}`);
  let lo = 0;
  let hi = points.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(encode(mid))) lo = mid;
    else hi = mid - 1;
  }
  return encode(lo);
}

/** printable(`text`), at most `maxChars` characters (code points): the start of it when longer. */
export function printableWithin(text: string, maxChars: number): string {
  return fitSerialized(text, (t) => t, { max: maxChars, unit: 'characters' });
}

/** `value` with printable() applied to every string in it, object keys included: a document received from elsewhere, made safe to print. */
export function printableDeep<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T;
  if (Array.isArray(value)) return value.map(printableDeep) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)])) as T;
  }
  return value;
}
