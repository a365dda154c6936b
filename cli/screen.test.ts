import { describe, expect, it } from 'vitest';
import { plainScreen, ttyScreen } from './screen.ts';

describe('screens', () => {
  it('tty: the status line is redrawn in place and stays below permanent lines', () => {
    let out = '';
    const s = ttyScreen((x) => (out += x));
    s.line('a');
    s.status('⠋ wait');
    s.status('⠋ wait'); // unchanged: nothing written
    s.line('b');
    s.status('⠙ wait');
    s.close();
    expect(out).toBe('a\n\r\x1b[2K⠋ wait\r\x1b[2Kb\n⠋ wait\r\x1b[2K⠙ wait\r\x1b[2K');
  });
  it('plain: lines only, no control characters', () => {
    let out = '';
    const s = plainScreen((x) => (out += x));
    s.line('a');
    s.status('⠋ wait');
    s.line('b');
    s.close();
    expect(out).toBe('a\nb\n');
  });
});
