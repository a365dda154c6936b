import { describe, expect, it } from 'vitest';
import { parseClusterArgs, parseLease } from './cluster.ts';
import { UsageError } from './tenant.ts';

describe('npm run cluster: arguments', () => {
  it('add: the capacity in ledger units, a resource not given is 0, the default lease', () => {
    expect(parseClusterArgs(['add', 'eu-1', 'cpu=64', 'memory=256Gi', '--reason', ' first region '])).toEqual({
      kind: 'add',
      name: 'eu-1',
      capacity: { cpu: 64_000, memory: 262_144, 'nvidia.com/gpu': 0, modelservices: 0 },
      leaseMs: 15_000,
      reason: 'first region',
    });
    expect(parseClusterArgs(['add', 'c2', 'nvidia.com/gpu=8', '--lease=1m'])).toMatchObject({ capacity: { 'nvidia.com/gpu': 8 }, leaseMs: 60_000 });
  });

  it('drain, ready, forget, rebalance, adopt, capacity, show, list, resume', () => {
    expect(parseClusterArgs(['forget', 'eu-1', '--reason', 'region closed'])).toEqual({ kind: 'forget', name: 'eu-1', reason: 'region closed' });
    expect(parseClusterArgs(['drain', 'eu-1', '--reason=maintenance'])).toEqual({ kind: 'drain', name: 'eu-1', reason: 'maintenance' });
    expect(parseClusterArgs(['ready', 'eu-1'])).toEqual({ kind: 'ready', name: 'eu-1' });
    expect(parseClusterArgs(['rebalance', 'eu-1', '--reason', 'skewed'])).toEqual({ kind: 'rebalance', name: 'eu-1', reason: 'skewed' });
    // capacity: only the resources given change.
    expect(parseClusterArgs(['capacity', 'eu-1', 'nvidia.com/gpu=12', '--reason=new cards'])).toEqual({ kind: 'capacity', name: 'eu-1', capacity: { 'nvidia.com/gpu': 12 }, reason: 'new cards' });
    expect(parseClusterArgs(['adopt', 'default', '--reason', 'upgrade'])).toEqual({ kind: 'adopt', name: 'default', reason: 'upgrade' });
    expect(parseClusterArgs(['show', 'eu-1'])).toEqual({ kind: 'show', name: 'eu-1' });
    expect(parseClusterArgs(['list'])).toEqual({ kind: 'list' });
    expect(parseClusterArgs(['resume'])).toEqual({ kind: 'resume' });
  });

  it.each([
    [[], /usage/],
    [['grow', 'eu-1'], /usage/],
    [['add'], /usage/],
    [['add', 'EU_1', 'cpu=1'], /not a cluster name/],
    [['add', 'eu-1'], /at least one limit/],
    [['add', 'eu-1', 'disk=1'], /unknown resource/],
    [['add', 'eu-1', 'cpu=lots'], /cpu/],
    [['add', 'eu-1', 'cpu=1', '--lease', '500ms'], /from 1s/],
    [['add', 'eu-1', 'cpu=1', '--lease'], /needs a value/],
    [['drain'], /drain <name>/],
    [['forget', 'eu-1'], /forget needs --reason/],
    [['forget', 'eu-1', '--reason', 'x', '--lease', '5s'], /no --lease/],
    [['drain', 'a', 'b'], /drain <name>/],
    [['drain', 'eu-1', '--lease', '5s'], /no --lease/],
    [['rebalance'], /rebalance <name>/],
    [['adopt'], /adopt <name>/],
    [['adopt', 'default', '--lease', '5s'], /no --lease/],
    [['capacity', 'eu-1'], /at least one limit/],
    [['capacity', 'eu-1', 'cpu=1', '--lease', '5s'], /no --lease/],
    [['ready', 'eu-1', '--reason', '   '], /1 to 1000/],
    [['ready', 'eu-1', '--force'], /unknown option/],
    [['list', 'eu-1'], /no arguments/],
    [['show', 'eu-1', '--reason', 'x'], /no --reason/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseClusterArgs(argv)).toThrow(UsageError);
    expect(() => parseClusterArgs(argv)).toThrow(message);
  });

  it('reads a lease in s, m, ms or bare seconds', () => {
    expect([parseLease('15s'), parseLease('2m'), parseLease('1500ms'), parseLease('30')]).toEqual([15_000, 120_000, 1500, 30_000]);
    expect(() => parseLease('1h')).toThrow(UsageError);
    expect(() => parseLease('61m')).toThrow(/60m/);
  });
});
