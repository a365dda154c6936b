import { describe, expect, it } from 'vitest';
import type { KubeObject } from './informer.ts';
import { WriteTracker } from './read-your-writes.ts';

const obj = (rv: string, uid = 'u'): KubeObject => ({ metadata: { name: 'a', namespace: 'ns', resourceVersion: rv, uid } });

describe('WriteTracker', () => {
  it('serves our write until the cache delivers it', () => {
    const t = new WriteTracker();
    t.observed('K', obj('1'));
    t.wrote('K', obj('2'));
    expect(t.read('K', 'ns', 'a', obj('1'))?.metadata.resourceVersion).toBe('2');
    expect(t.read('K', 'ns', 'a', undefined)?.metadata.resourceVersion).toBe('2'); // created, not cached yet
    t.observed('K', obj('2'));
    t.observed('K', obj('3'));
    expect(t.read('K', 'ns', 'a', obj('3'))?.metadata.resourceVersion).toBe('3');
  });

  it('does not track a write whose watch event arrived before its response', () => {
    const t = new WriteTracker();
    t.observed('K', obj('2'));
    t.observed('K', obj('3'));
    t.wrote('K', obj('2'));
    expect(t.read('K', 'ns', 'a', obj('3'))?.metadata.resourceVersion).toBe('3');
  });

  it('expires, trusts a replaced object, and forgets on delete', () => {
    let now = 0;
    const t = new WriteTracker({ ttlMs: 100, now: () => now });
    t.wrote('K', obj('2'));
    expect(t.read('K', 'ns', 'a', obj('9', 'other'))?.metadata.uid).toBe('other');
    now = 101;
    expect(t.read('K', 'ns', 'a', obj('1'))?.metadata.resourceVersion).toBe('1');
    t.wrote('K', obj('4'));
    t.forget('K', 'ns', 'a');
    expect(t.read('K', 'ns', 'a', undefined)).toBeUndefined();
  });
});
