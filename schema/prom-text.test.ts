import { expect, test } from 'vitest';
import { metricValue, parsePrometheus } from './prom-text.ts';

const TEXT = `# HELP x_total Things.
# TYPE x_total counter
x_total{endpoint="chat",outcome="completed"} 3
x_total{endpoint="text",outcome="completed"} 2
x_total{endpoint="text",outcome="in\\"valid"} 1
depth 4
lat_bucket{le="+Inf"} 7 1700000000000
`;

test('parses samples, labels (with escapes), +Inf and timestamps', () => {
  const samples = parsePrometheus(TEXT);
  expect(samples).toHaveLength(5);
  expect(samples[2]).toEqual({ name: 'x_total', labels: { endpoint: 'text', outcome: 'in"valid' }, value: 1 });
  expect(samples[4]).toEqual({ name: 'lat_bucket', labels: { le: '+Inf' }, value: 7 });
});

test.each([
  ['x_total', {}, 6],
  ['x_total', { outcome: 'completed' }, 5],
  ['x_total', { endpoint: 'chat', outcome: 'completed' }, 3],
  ['depth', {}, 4],
  ['missing', {}, 0],
])('metricValue(%s, %o) = %d', (name, labels, expected) => {
  expect(metricValue(parsePrometheus(TEXT), name, labels)).toBe(expected);
});

test('rejects garbage instead of guessing', () => {
  expect(() => parsePrometheus('not a metric line at all')).toThrow(/unparsable/);
  expect(() => parsePrometheus('depth four')).toThrow(/unparsable metrics value: four/);
});

test('NaN and Inf in any case are values (prom-client writes Nan), as Go\'s ParseFloat reads them', () => {
  expect(parsePrometheus('a Nan\nb nan\nc +inf\nd -Inf\ne Inf\n').map((s) => s.value)).toEqual([NaN, NaN, Infinity, -Infinity, Infinity]);
});

test('NaN is a value, and exponent notation parses (prometheus_client writes 1e+06)', () => {
  const samples = parsePrometheus('a NaN\nb 1e+06\nc -0.5\n');
  expect(samples.map((s) => s.value)).toEqual([NaN, 1e6, -0.5]);
});
