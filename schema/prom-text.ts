// Minimal parser for the Prometheus text exposition format (0.0.4). Pure. The controller's
// autoscaler reads its pods' load with it (controller/autoscale/scrape.ts); tests and benchmarks
// observe a server through its /metrics endpoint with it.

export type Sample = { name: string; labels: Record<string, string>; value: number };

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`unparsable metrics line: ${line}`);
    const [, name = '', labelText = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const [, key = '', escaped = ''] of labelText.matchAll(LABEL)) {
      labels[key] = escaped.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name, labels, value: parseValue(value) });
  }
  return samples;
}

/** Go's ParseFloat, which Prometheus uses: Inf and NaN in any case (prom-client writes `Nan`). */
function parseValue(text: string): number {
  const word = text.toLowerCase();
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  if (word === 'nan') return NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`unparsable metrics value: ${text}`);
  return value;
}

/** Sum of the samples named `name` whose labels include `labels` (0 when none match). */
export function metricValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
