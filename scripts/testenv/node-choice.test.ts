import { describe, expect, it } from 'vitest';
import { chooseNode, type Machine } from './node-choice.ts';

const root: Machine = { platform: 'linux', uid: 0, argv: [], env: undefined };

describe('chooseNode', () => {
  it.each<[string, Machine, 'real' | 'kwok', RegExp]>([
    ['Linux as root: real', root, 'real', /Linux and root/],
    ['Linux, not root: KWOK, and why', { ...root, uid: 1000 }, 'kwok', /not root/],
    ['macOS: KWOK, and why', { ...root, platform: 'darwin', uid: 501 }, 'kwok', /not Linux \(darwin\)/],
    ['--kwok as root: KWOK', { ...root, argv: ['--kwok'] }, 'kwok', /--kwok/],
    ['MODELDOCK_NODE=kwok: KWOK', { ...root, env: 'kwok' }, 'kwok', /MODELDOCK_NODE=kwok/],
    ['--real-node as root: real', { ...root, argv: ['--real-node'] }, 'real', /--real-node/],
    ['MODELDOCK_NODE=real as root: real', { ...root, env: 'real' }, 'real', /MODELDOCK_NODE=real/],
    ['an empty MODELDOCK_NODE is unset', { ...root, env: '' }, 'real', /Linux and root/],
  ])('%s', (_, m, kind, why) => {
    const c = chooseNode(m);
    expect(c.kind).toBe(kind);
    expect(c.why).toMatch(why);
  });

  it.each<[string, Machine, RegExp]>([
    ['--real-node without root', { ...root, uid: 1000, argv: ['--real-node'] }, /--real-node: a real node cannot start here: not root/],
    ['MODELDOCK_NODE=real on macOS', { ...root, platform: 'darwin', env: 'real' }, /not Linux/],
    ['both flags', { ...root, argv: ['--real-node', '--kwok'] }, /exclude each other/],
    ['an unknown MODELDOCK_NODE', { ...root, env: 'fake' }, /must be "real" or "kwok"/],
  ])('refuses %s', (_, m, msg) => {
    expect(() => chooseNode(m)).toThrow(msg);
  });
});
