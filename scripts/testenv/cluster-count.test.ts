import { describe, expect, it } from 'vitest';
import { clusterCount } from './cluster-count.ts';

describe('clusterCount (--clusters N)', () => {
  it('is 1 without the flag, N with it in either spelling', () => {
    expect(clusterCount([])).toBe(1);
    expect(clusterCount(['--kwok'])).toBe(1);
    expect(clusterCount(['--clusters', '3'])).toBe(3);
    expect(clusterCount(['--kwok', '--clusters=2'])).toBe(2);
  });
  it.each([[['--clusters']], [['--clusters', 'three']], [['--clusters=0']], [['--clusters', '4']], [['--clusters', '2.5']], [['--clusters', '-1']]])('refuses %j', (argv) => {
    expect(() => clusterCount(argv)).toThrow(/--clusters takes a whole number from 1 to 3/);
  });
});
