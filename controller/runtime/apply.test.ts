import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../schema/canonical-json.ts';
import { converged, DESIRED_HASH_ANNOTATION, hashOf, isSubset, prune, withDesiredHash } from './apply.ts';

describe('isSubset', () => {
  it.each([
    ['server-defaulted extra fields are ignored', { a: 1 }, { a: 1, b: 2 }, true],
    ['a changed value is noticed', { a: 1 }, { a: 2 }, false],
    ['a missing field is noticed', { a: { b: 1 } }, { a: {} }, false],
    ['arrays compare element-wise with equal length', { l: [{ x: 1 }] }, { l: [{ x: 1, d: true }] }, true],
    ['a longer live array is a difference', { l: [1] }, { l: [1, 2] }, false],
    ['quantities compare by value', { resources: { limits: { memory: '1024Mi' } } }, { resources: { limits: { memory: '1Gi' } } }, true],
    ['cpu 0.5 = 500m', { resources: { requests: { cpu: '0.5' } } }, { resources: { requests: { cpu: '500m' } } }, true],
    ['different quantities differ', { resources: { requests: { cpu: '1' } } }, { resources: { requests: { cpu: '500m' } } }, false],
    ['quantity rule only under resources', { requests: { cpu: '1' } }, { requests: { cpu: '1000m' } }, false],
    ["a ResourceQuota's spec.hard is quantities", { spec: { hard: { 'requests.cpu': '1000m', 'limits.memory': '4096Mi', pods: '40' } } }, { spec: { hard: { 'requests.cpu': '1', 'limits.memory': '4Gi', pods: '40' } } }, true],
    ['…and a changed one differs', { spec: { hard: { 'requests.cpu': '2000m' } } }, { spec: { hard: { 'requests.cpu': '1' } } }, false],
    ['hard elsewhere is not', { hard: { x: '1000m' } }, { hard: { x: '1' } }, false],
  ])('%s', (_name, desired, live, expected) => {
    expect(isSubset(desired, live)).toBe(expected);
  });
});

describe('prune / canonicalJson / hash', () => {
  it('drops undefined, empty arrays and empty objects, keeps 0, false and ""', () => {
    expect(prune({ a: undefined, b: [], c: {}, d: { e: [] }, f: 0, g: false, h: '', i: [{}] })).toEqual({ f: 0, g: false, h: '', i: [{}] });
  });
  it('canonical JSON ignores key order; the hash follows', () => {
    expect(canonicalJson({ b: 1, a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":1}');
    expect(hashOf({ a: 1, b: 2 })).toBe(hashOf({ b: 2, a: 1 }));
  });
});

describe('converged', () => {
  const desired = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 's', labels: { x: '1' }, ownerReferences: [{ apiVersion: 'a/v1', kind: 'K', name: 'o', uid: 'u', controller: true }] },
    spec: { ports: [{ port: 80 }] },
  };
  const live = (extra: object = {}) => ({
    // list items carry no apiVersion/kind; the server adds defaults and other owners may be present
    metadata: { name: 's', resourceVersion: '5', labels: { x: '1', other: 'y' }, annotations: { [DESIRED_HASH_ANNOTATION]: hashOf(desired) } },
    spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }], clusterIP: '10.0.0.1' },
    ...extra,
  });
  it('is true for the live object we created (defaults, foreign labels, no kind)', () => {
    expect(withDesiredHash(desired).metadata.annotations[DESIRED_HASH_ANNOTATION]).toBe(hashOf(desired));
    expect(converged(desired, live())).toBe(true);
  });
  it('is false after drift, or when our desired state changed (hash), even by a removal', () => {
    expect(converged(desired, live({ spec: { ports: [{ port: 81 }] } }))).toBe(false);
    const fewer = { ...desired, metadata: { ...desired.metadata, labels: {} } };
    expect(converged(fewer, live())).toBe(false);
  });
});
