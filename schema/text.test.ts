import { describe, expect, it } from 'vitest';
import { fitSerialized, mysqlLength, printable, printableDeep, printableWithin } from './text.ts';

const QUOTES_4K = '"'.repeat(4096);
const asJson = (message: string) => JSON.stringify({ reason: 'CrashLoopBackOff', message });
const COLUMN = { max: 4096, unit: 'characters' } as const;

describe('printable', () => {
  it.each([
    ['ESC sequences (C0)', 'a\u001b[2J\u001b]0;owned\u0007b', 'a[2J]0;ownedb'],
    ['NUL, BEL, backspace', 'x\u0000\u0007\by', 'xy'],
    ['DEL', 'x\u007fy', 'xy'],
    ['C1, CSI (U+009B) among them', 'x\u009b31m\u0080\u009fy', 'x31my'],
    ['bidirectional overrides and isolates', 'a\u202ecba\u202c\u2066b\u2069', 'acbab'],
    ['word-separating controls become a space', 'a\tb\nc\r\nd\u0085e\vf\fg', 'a b c  d e f g'],
    ['ordinary text, quotes and multi-byte characters unchanged', 'weights "corrupt" — 模型 🙂 é', 'weights "corrupt" — 模型 🙂 é'],
  ])('%s', (_, input, output) => {
    expect(printable(input)).toBe(output);
  });

  it('a lone surrogate (high or low) becomes U+FFFD; a pair is kept', () => {
    expect(printable('a\ud83db')).toBe('a\ufffdb');
    expect(printable('a\ude42b')).toBe('a\ufffdb');
    expect(printable('\ude42\ud83d')).toBe('\ufffd\ufffd');
    expect(printable('\ud83d\ude42')).toBe('🙂');
  });
});

describe('mysqlLength', () => {
  it('counts characters as code points (utf8mb4 VARCHAR) and bytes as UTF-8 (TEXT)', () => {
    expect(mysqlLength('a模🙂', 'characters')).toBe(3);
    expect('a模🙂'.length).toBe(4);
    expect(mysqlLength('a模🙂', 'bytes')).toBe(1 + 3 + 4);
  });
});

describe('fitSerialized', () => {
  it('text that fits is serialized whole', () => {
    expect(fitSerialized('weights corrupt', asJson, COLUMN)).toBe(asJson('weights corrupt'));
  });

  it('4 KiB of " (2,048 or 4,096): the JSON the column receives fits, although each " is escaped to two characters', () => {
    for (const message of ['"'.repeat(2048), QUOTES_4K]) {
      const stored = fitSerialized(message, asJson, COLUMN);
      expect(mysqlLength(stored, 'characters')).toBeLessThanOrEqual(4096);
      const kept = (JSON.parse(stored) as { message: string }).message;
      expect(kept).toMatch(/^"+$/);
      // The longest prefix: one more quote would not fit.
      expect(mysqlLength(asJson(`${kept}"`), 'characters')).toBeGreaterThan(4096);
    }
  });

  it('cutting the text before escaping it is not enough: 2,048 quotes escape to more than 4,096 characters', () => {
    expect(asJson('"'.repeat(2048)).length).toBeGreaterThan(4096);
  });

  it('multi-byte characters count once each in a VARCHAR: 5,000 of 模 keep more than 4,000 of them', () => {
    const stored = fitSerialized('模'.repeat(5000), asJson, COLUMN);
    const kept = (JSON.parse(stored) as { message: string }).message;
    expect(mysqlLength(stored, 'characters')).toBe(4096);
    expect(kept.length).toBe(4096 - asJson('').length);
  });

  it('characters outside the BMP count once (not as two UTF-16 units) and are never split into a lone surrogate', () => {
    const stored = fitSerialized('🙂'.repeat(5000), asJson, COLUMN);
    const kept = (JSON.parse(stored) as { message: string }).message;
    expect(mysqlLength(stored, 'characters')).toBe(4096);
    expect(Array.from(kept).every((c) => c === '🙂')).toBe(true);
    expect(printable(kept)).toBe(kept);
  });

  it('in bytes (a TEXT column), a multi-byte character is not cut in half', () => {
    const stored = fitSerialized('é'.repeat(100), (t) => t, { max: 11, unit: 'bytes' });
    expect(stored).toBe('é'.repeat(5));
  });

  it('control characters are stripped before fitting (they would grow sixfold as \\u escapes)', () => {
    const stored = fitSerialized('\u0001'.repeat(4096) + 'end', asJson, COLUMN);
    expect(JSON.parse(stored)).toEqual({ reason: 'CrashLoopBackOff', message: 'end' });
  });

  it('lone surrogates are replaced, so the JSON holds no \\u escape of one', () => {
    const stored = fitSerialized('a\ud800b', asJson, COLUMN);
    expect(stored).not.toMatch(/\\ud800/i);
    expect((JSON.parse(stored) as { message: string }).message).toBe('a\ufffdb');
  });

  it('a frame that cannot fit even an empty text is a RangeError', () => {
    expect(() => fitSerialized('x', (t) => `${'-'.repeat(10)}${t}`, { max: 5, unit: 'characters' })).toThrow(new RangeError('not even an empty text fits 5 characters'));
  });
});

describe('printableWithin', () => {
  it('cuts at a number of characters, never inside a surrogate pair', () => {
    expect(printableWithin('ab\u001bcd', 3)).toBe('abc');
    expect(printableWithin('🙂🙂🙂', 2)).toBe('🙂🙂');
    expect(printableWithin('short', 100)).toBe('short');
  });
});

describe('printableDeep', () => {
  it('every string of a document, at any depth, keys included; other values unchanged', () => {
    const doc = { name: 'a\u001b[31m', n: 3, ok: true, none: null, items: [{ msg: 'x\u009by', tags: ['\u0007t'] }], ['k\u0000ey']: 'v' };
    expect(printableDeep(doc)).toEqual({ name: 'a[31m', n: 3, ok: true, none: null, items: [{ msg: 'xy', tags: ['t'] }], key: 'v' });
    expect(printableDeep('\u001b')).toBe('');
    expect(printableDeep(undefined)).toBeUndefined();
  });
});
