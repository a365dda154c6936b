import { describe, expect, it } from 'vitest';
import { parseAffinityArgs, UsageError } from './tenant.ts';

describe('npm run tenant -- affinity', () => {
  it('takes a tenant and its clusters in order; "" clears them', () => {
    expect(parseAffinityArgs(['acme', 'c1,c3'])).toEqual({ tenant: 'acme', clusters: ['c1', 'c3'] });
    expect(parseAffinityArgs(['acme', ''])).toEqual({ tenant: 'acme', clusters: [] });
  });
  it.each([
    [[], /usage/],
    [['acme'], /usage/],
    [['acme', 'c1', 'more'], /usage/],
    [['Acme!', 'c1'], /not a tenant name/],
    [['acme', 'c1,C_2'], /"C_2" is not a cluster name/],
    [['acme', 'c1,,c2'], /"" is not a cluster name/],
    [['acme', 'c1,c1'], /named twice/],
  ])('refuses %j', (args, message) => {
    expect(() => parseAffinityArgs(args)).toThrow(UsageError);
    expect(() => parseAffinityArgs(args)).toThrow(message);
  });
});
