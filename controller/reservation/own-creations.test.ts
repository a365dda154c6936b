import { describe, expect, it } from 'vitest';
import { OwnCreations } from './own-creations.ts';

const cr = (uid: string, resourceVersion: string) => ({ metadata: { uid, resourceVersion } });

describe('OwnCreations: the informer add event of a CR this process just created is no news', () => {
  it('the add event at the create\'s resourceVersion is an echo, once', () => {
    const own = new OwnCreations();
    own.note(cr('u1', '10'));
    expect(own.isEcho(cr('u1', '10'))).toBe(true);
    expect(own.isEcho(cr('u1', '10'))).toBe(false); // a re-list later brings it back: news again
  });

  it('a newer resourceVersion, another object, or one never noted is news', () => {
    const own = new OwnCreations();
    own.note(cr('u1', '10'));
    own.note(cr('u2', '11'));
    expect(own.isEcho(cr('u1', '12'))).toBe(false);
    expect(own.isEcho(cr('u3', '11'))).toBe(false);
    expect(own.isEcho({ metadata: {} })).toBe(false);
    expect(own.isEcho(cr('u2', '11'))).toBe(true);
  });

  it('an entry whose event never came is dropped after maxAgeMs, and the registry stays bounded', () => {
    let now = 0;
    const own = new OwnCreations({ maxAgeMs: 1_000, max: 2, now: () => now });
    own.note(cr('u1', '1'));
    now = 1_500;
    expect(own.isEcho(cr('u1', '1'))).toBe(false); // too old to trust
    own.note(cr('a', '1'));
    own.note(cr('b', '1'));
    own.note(cr('c', '1'));
    expect(own.size).toBe(2);
    expect(own.isEcho(cr('a', '1'))).toBe(false); // the oldest went first
    expect(own.isEcho(cr('c', '1'))).toBe(true);
  });
});
