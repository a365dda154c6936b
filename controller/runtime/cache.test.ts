import { describe, expect, it } from 'vitest';
import { Cache, CACHED_KINDS, selectorFor, type CachedKind } from './cache.ts';
import type { Informer, KubeObject } from './informer.ts';

describe('the cache watches every namespace, selecting only ModelDock’s objects', () => {
  it('children, tenant namespaces, quotas and policies by managed-by; ModelServices by kind; the installation label when set', () => {
    expect(selectorFor('Pod', undefined)).toBe('app.kubernetes.io/managed-by=modeldock');
    expect(selectorFor('Namespace', 'e2e-1')).toBe('app.kubernetes.io/managed-by=modeldock,modeldock.io/instance=e2e-1');
    expect(selectorFor('ModelService', undefined)).toBeUndefined();
    expect(selectorFor('ModelService', 'e2e-1')).toBe('modeldock.io/instance=e2e-1');
    for (const kind of Object.keys(CACHED_KINDS) as CachedKind[]) {
      expect(CACHED_KINDS[kind].path).not.toContain('/namespaces/'); // cluster-wide collections
      expect(selectorFor(kind, undefined) === undefined).toBe(kind === 'ModelService');
    }
  });

  it('one informer per kind, made once with its cluster-wide path and selector', () => {
    const made: Array<[string, string, string | undefined]> = [];
    const cache = new Cache('x', (name, path, selector) => {
      made.push([name, path, selector]);
      return { name } as unknown as Informer<KubeObject>;
    });
    expect(cache.informer('Deployment')).toBe(cache.informer('Deployment'));
    cache.informer('ResourceQuota');
    expect(made).toEqual([
      ['deployments', '/apis/apps/v1/deployments', 'app.kubernetes.io/managed-by=modeldock,modeldock.io/instance=x'],
      ['resourcequotas', '/api/v1/resourcequotas', 'app.kubernetes.io/managed-by=modeldock,modeldock.io/instance=x'],
    ]);
    expect(cache.informers).toHaveLength(2);
  });
});
