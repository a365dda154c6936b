// wrangler.toml's [[ratelimits]] tables as text: read (rate-limit.test.ts checks them against
// RATE_LIMITS) and rewritten with other limits (the test harness runs its Workers with limits of
// its own: test/support/worker.ts). Only the form wrangler.toml uses is understood —
// `name = "…"`, `namespace_id = "…"`, `simple = { limit = N, period = P }` — anything else throws.
// Not part of the Worker's bundle.

export interface RateLimitBinding {
  name: string;
  namespaceId: string;
  limit: number;
  period: number;
}

const HEADER = /^\s*\[\[ratelimits\]\]\s*(#.*)?$/;
const TABLE = /^\s*\[/;
const SIMPLE = /^(\s*simple\s*=\s*\{\s*limit\s*=\s*)(\d+)(\s*,\s*period\s*=\s*)(\d+)(\s*\}\s*)$/;
const field = (lines: string[], key: string): string | undefined =>
  lines.map((l) => new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"\\s*$`).exec(l)?.[1]).find((v) => v !== undefined);

/** The [[ratelimits]] tables: for each, the line numbers of its body. */
function tables(lines: string[]): number[][] {
  const out: number[][] = [];
  let current: number[] | undefined;
  lines.forEach((line, i) => {
    if (HEADER.test(line)) out.push((current = []));
    else if (TABLE.test(line)) current = undefined;
    else current?.push(i);
  });
  return out;
}

export function ratelimitsOf(toml: string): RateLimitBinding[] {
  const lines = toml.split('\n');
  return tables(lines).map((body) => {
    const text = body.map((i) => lines[i] as string);
    const simple = text.map((l) => SIMPLE.exec(l)).find((m) => m !== null);
    const name = field(text, 'name');
    const namespaceId = field(text, 'namespace_id');
    if (!simple || !name || !namespaceId) throw new Error(`a [[ratelimits]] table without name, namespace_id or simple = { limit = N, period = P }: ${text.join(' ').trim()}`);
    return { name, namespaceId, limit: Number(simple[2]), period: Number(simple[4]) };
  });
}

/** The same text with the limits of the named bindings replaced (periods stay). Throws on an unknown name. */
export function withLimits(toml: string, limits: Readonly<Record<string, number>>): string {
  const lines = toml.split('\n');
  const seen = new Set<string>();
  for (const body of tables(lines)) {
    const name = field(body.map((i) => lines[i] as string), 'name');
    const limit = name === undefined ? undefined : limits[name];
    if (limit === undefined) continue;
    seen.add(name as string);
    for (const i of body) lines[i] = (lines[i] as string).replace(SIMPLE, (_m, a: string, _l: string, b: string, p: string, z: string) => `${a}${limit}${b}${p}${z}`);
  }
  const unknown = Object.keys(limits).filter((n) => !seen.has(n));
  if (unknown.length > 0) throw new Error(`no [[ratelimits]] table named ${unknown.join(', ')}`);
  return lines.join('\n');
}
