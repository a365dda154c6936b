import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamText } from './stream-text.ts';

// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const shown = (deltas: string[]): string => {
  const t = new StreamText();
  return deltas.map((d) => t.push(d)).join('') + t.end();
};

describe('StreamText', () => {
  it('keeps line breaks and tabs, removes every other control character', () => {
    expect(shown(['def f():\n\treturn 1\n', '\u001b[2J\u001b]0;owned\u0007x\u009b31my\u202ez'])).toBe('def f():\n\treturn 1\n[2J]0;ownedx31myz');
  });

  it('a carriage return becomes a line break, also when "\\r\\n" is split between deltas', () => {
    expect(shown(['a\r\nb\rc'])).toBe('a\nb\nc');
    expect(shown(['a\r', '\nb'])).toBe('a\nb');
    expect(shown(['a\r', 'b'])).toBe('a\nb');
    expect(shown(['a\r'])).toBe('a\n');
  });

  it('holds a "\\r" or half an emoji until the next delta, and shows the rest at once', () => {
    const t = new StreamText();
    expect(t.push('one\r')).toBe('one');
    expect(t.push('\ntwo \ud83d')).toBe('\ntwo ');
    expect(t.push('\ude42!')).toBe('🙂!');
    expect(t.end()).toBe('');
  });

  it('a lone surrogate at the end is replaced, not dropped', () => {
    expect(shown(['x\ud83d'])).toBe('x\ufffd');
  });

  it('however a reply is cut into deltas, the same printable text', () => {
    const reply = 'Hi 🙂\r\n\tcode\u001b[31m red\r\nend\u0085.';
    const whole = shown([reply]);
    expect(whole).toBe('Hi 🙂\n\tcode[31m red\nend .');
    fc.assert(
      fc.property(fc.array(fc.nat(reply.length), { maxLength: 10 }), (cuts) => {
        const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), reply.length];
        const out = shown(at.slice(1).map((end, i) => reply.slice(at[i], end)));
        expect(out).toBe(whole);
        expect(out).not.toMatch(CONTROL);
      }),
    );
  });
});
