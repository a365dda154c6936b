import { describe, expect, it } from 'vitest';
import { LAST_ERROR_CODES, LAST_ERROR_MAX_CHARS, lastErrorText, readLastError } from './tenant-errors.ts';
import { mysqlLength } from './text.ts';

describe('lastErrorText / readLastError', () => {
  it.each(LAST_ERROR_CODES.filter((c) => c !== 'Unclassified'))('%s: stored as "<code>: <message>" and read back as code and message', (code) => {
    const stored = lastErrorText({ code, message: 'never Ready within 30000 ms' });
    expect(stored).toBe(`${code}: never Ready within 30000 ms`);
    expect(readLastError(stored)).toEqual({ code, message: 'never Ready within 30000 ms' });
  });

  it('a message of control characters, quotes and multi-byte characters is stored printable, within the bound', () => {
    const stored = lastErrorText({ code: 'ClusterPolicy', message: `\u001b[31m${'"'.repeat(3000)}\u009b模🙂\ud800` });
    expect(mysqlLength(stored, 'characters')).toBe(LAST_ERROR_MAX_CHARS);
    expect(stored).toMatch(/^ClusterPolicy: \[31m"+$/);
  });

  it('a message that fits is kept whole, multi-byte characters and all', () => {
    expect(lastErrorText({ code: 'ImagePolicy', message: 'registry 模型.example (模型.example/🙂:1) is not allowed' })).toBe(
      'ImagePolicy: registry 模型.example (模型.example/🙂:1) is not allowed',
    );
  });

  it('null is none; a text without a known code (an operator note, an older controller) is Unclassified, made printable and bounded', () => {
    expect(readLastError(null)).toBeNull();
    expect(readLastError('resolved by an operator (keep): tenant disputes')).toEqual({ code: 'Unclassified', message: 'resolved by an operator (keep): tenant disputes' });
    expect(readLastError('Bogus: x')).toEqual({ code: 'Unclassified', message: 'Bogus: x' });
    expect(readLastError(`x\u001by${'z'.repeat(5000)}`)?.message).toMatch(new RegExp(`^xyz{${LAST_ERROR_MAX_CHARS - 2}}$`));
  });

  it('a stored text with a code whose message holds control characters is read back printable', () => {
    expect(readLastError('NeverReady: a\u0007b\nc')).toEqual({ code: 'NeverReady', message: 'ab c' });
  });
});
