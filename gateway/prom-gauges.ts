// The sum of some metrics in a Prometheus text exposition (pure): a pod's load is the sum of the
// gauges LOAD_METRICS names, over all their series (vLLM labels each with its model name).
// A pod's /metrics is the tenant's program: anything that is not a well-formed sample is skipped.

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/** The sum over `names`' samples, or undefined when none of them is there (the load is unknown). */
export function sumOfMetrics(text: string, names: ReadonlySet<string>): number | undefined {
  let sum: number | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name || !names.has(name)) continue;
    const value = sampleValue(line, name.length);
    if (value !== undefined) sum = (sum ?? 0) + value;
  }
  return sum;
}

/** The value after the name and its optional `{labels}` (quoted label values may hold `}`). */
function sampleValue(line: string, from: number): number | undefined {
  let i = from;
  if (line[i] === '{') {
    let quoted = false;
    for (i += 1; i < line.length; i++) {
      const c = line[i];
      if (quoted && c === '\\') i += 1;
      else if (c === '"') quoted = !quoted;
      else if (!quoted && c === '}') break;
    }
    if (i >= line.length) return undefined;
    i += 1;
  }
  const [text] = line.slice(i).trim().split(/\s+/);
  if (!text) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}
