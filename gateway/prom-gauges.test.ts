import { describe, expect, it } from 'vitest';
import { sumOfMetrics } from './prom-gauges.ts';

const names = new Set(['modeldock_mock_slots_busy', 'modeldock_mock_queue_depth', 'vllm:num_requests_running', 'vllm:num_requests_waiting']);

describe('sumOfMetrics', () => {
  it('sums the named gauges over all their series', () => {
    const text = [
      '# HELP modeldock_mock_slots_busy Execution slots currently generating.',
      '# TYPE modeldock_mock_slots_busy gauge',
      'modeldock_mock_slots_busy 2',
      'modeldock_mock_queue_depth 3',
      'modeldock_mock_slots 2',
      'modeldock_mock_slots_busy_total 100',
      'vllm:num_requests_running{model_name="a",engine="0"} 1',
      'vllm:num_requests_running{model_name="b"} 1.5 1700000000000',
      'vllm:num_requests_waiting{model_name="odd } \\" name"} 4',
    ].join('\n');
    expect(sumOfMetrics(text, names)).toBe(11.5);
  });

  it('undefined when none of the names is there (the load is unknown, not 0)', () => {
    expect(sumOfMetrics('process_cpu_seconds_total 3\n', names)).toBeUndefined();
    expect(sumOfMetrics('', names)).toBeUndefined();
  });

  it('skips what is not a well-formed sample', () => {
    expect(sumOfMetrics('modeldock_mock_slots_busy NaN\nmodeldock_mock_slots_busy{broken 5\nmodeldock_mock_slots_busy\nmodeldock_mock_queue_depth 1\r\n', names)).toBe(1);
    expect(sumOfMetrics('modeldock_mock_slots_busy +Inf\n', names)).toBeUndefined();
  });
});
