import { describe, expect, it } from 'vitest';
import { mysqlLength } from '../schema/text.ts';
import { FAILURE_COLUMN_CHARS, failureColumn, failureOrNull } from './columns.ts';

const base = { reason: 'CrashLoopBackOff', pod: 'md-x-7b9-abcde', container: 'model', exitCode: 3 };
const chars = (s: string) => mysqlLength(s, 'characters');

describe('failureColumn', () => {
  it('a short failure is stored whole and reads back the same', () => {
    const f = { ...base, message: 'weights corrupt' };
    expect(failureOrNull(failureColumn(f))).toEqual(f);
  });

  it.each([
    ['quotes (each escaped to two characters), 2,048 of them', '"'.repeat(2048)],
    ['quotes, 4 KiB of them', '"'.repeat(4096)],
    ['backslashes', '\\'.repeat(4096)],
    ['plain text', 'x'.repeat(10_000)],
    ['multi-byte characters', '模'.repeat(5000)],
    ['characters outside the BMP (one character each to MySQL, two UTF-16 units)', '🙂'.repeat(5000)],
  ])('a message of %s is cut to fit the column as MySQL counts it, keeping the longest prefix', (_, message) => {
    const stored = failureColumn({ ...base, message });
    expect(chars(stored)).toBeLessThanOrEqual(FAILURE_COLUMN_CHARS);
    const back = failureOrNull(stored);
    expect(back).not.toBeNull();
    expect(message.startsWith(back!.message)).toBe(true);
    // One more character would not have fitted.
    const kept = Array.from(back!.message).length;
    expect(chars(JSON.stringify({ ...base, message: Array.from(message).slice(0, kept + 1).join('') }))).toBeGreaterThan(FAILURE_COLUMN_CHARS);
  });

  it('control characters are stripped, not escaped (a message of 4 KiB of them stores as empty), and a lone surrogate is replaced', () => {
    expect(failureOrNull(failureColumn({ ...base, message: `\u0001`.repeat(4096) }))?.message).toBe('');
    expect(failureOrNull(failureColumn({ ...base, message: '\u001b[2Jok\u009b\ud800' }))?.message).toBe('[2Jok\ufffd');
  });

  it('the other fields are printable and bounded too, so the whole always fits', () => {
    const stored = failureColumn({ reason: '"'.repeat(5000), message: '"'.repeat(5000), pod: '\u001bp'.repeat(3000), container: 'c'.repeat(3000), at: '"'.repeat(3000), exitCode: 1 });
    expect(chars(stored)).toBeLessThanOrEqual(FAILURE_COLUMN_CHARS);
    expect(failureOrNull(stored)).toMatchObject({ reason: '"'.repeat(64), pod: 'p'.repeat(253), container: 'c'.repeat(253) });
  });
});

describe('failureOrNull', () => {
  it('a row written before messages were made printable reads back printable', () => {
    expect(failureOrNull(JSON.stringify({ ...base, message: 'a\u001b[31mb', pod: 'p\u0007' }))).toEqual({ ...base, message: 'a[31mb', pod: 'p' });
  });
  it('a value that does not parse reads as none', () => {
    expect(failureOrNull('{')).toBeNull();
    expect(failureOrNull(JSON.stringify({ message: 'no reason' }))).toBeNull();
    expect(failureOrNull(null)).toBeNull();
  });
});
