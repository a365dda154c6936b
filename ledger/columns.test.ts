import { describe, expect, it } from 'vitest';
import { FAILURE_COLUMN_CHARS, failureColumn, failureOrNull } from './columns.ts';

const base = { reason: 'CrashLoopBackOff', pod: 'md-x-7b9-abcde', container: 'model', exitCode: 3 };

describe('failureColumn', () => {
  it('a short failure is stored whole and reads back the same', () => {
    const f = { ...base, message: 'weights corrupt' };
    expect(failureOrNull(failureColumn(f))).toEqual(f);
  });

  it.each([
    ['quotes (each escaped to two characters)', '"'.repeat(4096)],
    ['control characters (each escaped to six)', '\u0001'.repeat(4096)],
    ['plain text', 'x'.repeat(10_000)],
    ['multi-byte characters', '模'.repeat(5000)],
  ])('a message of %s is cut to fit the column, keeping the longest prefix', (_, message) => {
    const stored = failureColumn({ ...base, message });
    expect(stored.length).toBeLessThanOrEqual(FAILURE_COLUMN_CHARS);
    const back = failureOrNull(stored);
    expect(back).not.toBeNull();
    expect(message.startsWith(back!.message)).toBe(true);
    // One more character would not have fitted.
    expect(JSON.stringify({ ...base, message: message.slice(0, back!.message.length + 1) }).length).toBeGreaterThan(FAILURE_COLUMN_CHARS);
  });
});
