import { describe, expect, it } from 'vitest';
import { AMOUNT_COLUMNS, amountArgs, amountColumns, amountsFromRow, chargedResources, releaseUsageByAmounts, RESOURCE_NAMES } from './resources.ts';

describe('the resource → column mapping', () => {
  it('one column per resource, in RESOURCE_NAMES order, optionally under an alias', () => {
    expect(RESOURCE_NAMES).toEqual(['cpu', 'memory', 'nvidia.com/gpu', 'modelservices']);
    expect(AMOUNT_COLUMNS).toEqual({ cpu: 'cpu_millis', memory: 'memory_mib', 'nvidia.com/gpu': 'gpu', modelservices: 'modelservices' });
    expect(amountColumns()).toBe('cpu_millis, memory_mib, gpu, modelservices');
    expect(amountColumns('r')).toBe('r.cpu_millis, r.memory_mib, r.gpu, r.modelservices');
  });
  it('statement arguments follow the same order', () => {
    expect(amountArgs({ cpu: 1500, memory: 2048, 'nvidia.com/gpu': 1, modelservices: 1 })).toEqual([1500, 2048, 1, 1]);
  });
  it('reads the amount columns of a row, optionally under a prefix', () => {
    expect(amountsFromRow({ cpu_millis: '1500', memory_mib: '2048', gpu: '1', modelservices: '1' })).toEqual({ cpu: 1500, memory: 2048, 'nvidia.com/gpu': 1, modelservices: 1 });
    expect(amountsFromRow({ r_cpu_millis: 3, r_memory_mib: 4, r_gpu: 0, r_modelservices: 1, cpu_millis: 99 }, 'r_')).toEqual({ cpu: 3, memory: 4, 'nvidia.com/gpu': 0, modelservices: 1 });
  });
});

describe('the release arithmetic', () => {
  it('a charge touches only the resources it asks for', () => {
    expect(chargedResources({ cpu: 1500, memory: 0, 'nvidia.com/gpu': 1, modelservices: 1 })).toEqual(['cpu', 'nvidia.com/gpu', 'modelservices']);
    expect(chargedResources({ cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 })).toEqual([]);
    expect(chargedResources({ cpu: 1, memory: 1, 'nvidia.com/gpu': 1, modelservices: 0 })).toEqual(['cpu', 'memory', 'nvidia.com/gpu']);
  });
  it('the same arithmetic with the amounts as arguments: one WHEN per resource, in RESOURCE_NAMES order', () => {
    expect(releaseUsageByAmounts({ cpu: 1500, memory: 2048, 'nvidia.com/gpu': 0, modelservices: 1 })).toEqual({
      sql: 'used = used - CASE resource WHEN ? THEN ? WHEN ? THEN ? WHEN ? THEN ? WHEN ? THEN ? ELSE 0 END',
      args: ['cpu', 1500, 'memory', 2048, 'nvidia.com/gpu', 0, 'modelservices', 1],
    });
  });
});
