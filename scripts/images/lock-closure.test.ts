import { describe, expect, it } from 'vitest';
import { closure, pinnedVersions, resolveIn, type Lockfile } from './lock-closure.ts';

const lock: Lockfile = {
  packages: {
    '': {},
    'node_modules/a': { version: '1.0.0', dependencies: { b: '^1', c: '^2' }, peerDependencies: { p: '*', q: '*' }, peerDependenciesMeta: { q: { optional: true } } },
    'node_modules/b': { version: '1.2.0', optionalDependencies: { absent: '*' } },
    'node_modules/c': { version: '1.0.0' }, // hoisted c@1 belongs to someone else
    'node_modules/a/node_modules/c': { version: '2.0.0', dependencies: { b: '^1' } },
    'node_modules/p': { version: '3.0.0' },
    'node_modules/dev-only': { version: '1.0.0', dev: true, peerDependencies: {} },
    'node_modules/z': { version: '1.0.0', peerDependencies: { 'dev-only': '*' }, peerDependenciesMeta: { 'dev-only': { optional: true } } },
  },
};

describe('lockfile closure', () => {
  it('resolves like Node: nested first, then up the tree', () => {
    expect(resolveIn(lock, 'node_modules/a', 'c')).toBe('node_modules/a/node_modules/c');
    expect(resolveIn(lock, 'node_modules/a/node_modules/c', 'b')).toBe('node_modules/b');
    expect(resolveIn(lock, '', 'c')).toBe('node_modules/c');
    expect(resolveIn(lock, '', 'nope')).toBeUndefined();
  });

  it('collects dependencies, peers and present optionals; skips absent optionals and dev-only optional peers', () => {
    expect(closure(lock, ['a'])).toEqual(['node_modules/a', 'node_modules/a/node_modules/c', 'node_modules/b', 'node_modules/p']);
    expect(closure(lock, ['z'])).toEqual(['node_modules/z']);
  });

  it('fails on a required package that is not installed', () => {
    expect(() => closure({ packages: { 'node_modules/x': { dependencies: { y: '1' } } } }, ['x'])).toThrow(/y \(needed by node_modules\/x\)/);
  });

  it('pins the root dependencies to their installed versions', () => {
    expect(pinnedVersions(lock, ['a', 'b'])).toEqual({ a: '1.0.0', b: '1.2.0' });
    expect(() => pinnedVersions(lock, ['nope'])).toThrow(/not a top-level dependency/);
  });
});
