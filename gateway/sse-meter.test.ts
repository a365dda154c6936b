import { describe, expect, it } from 'vitest';
import { SseMeter } from './sse-meter.ts';

const chat = (content?: string) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: null }] })}\n\n`;
const text = (t: string) => `data: ${JSON.stringify({ object: 'text_completion', choices: [{ index: 0, text: t, finish_reason: null }] })}\n\n`;
const opening = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })}\n\n`;
const usage = `data: ${JSON.stringify({ choices: [], usage: { completion_tokens: 3 } })}\n\n`;

/** A meter whose clock reads t (ms), advanced by the caller. */
function meter() {
  const clock = { t: 0 };
  return { clock, m: new SseMeter(() => clock.t) };
}
const bytes = (s: string) => new TextEncoder().encode(s);

describe('SseMeter', () => {
  it('counts the events that carry content: chat deltas and completion texts', () => {
    const { m } = meter();
    for (const part of [opening, chat('Hel'), chat('lo'), chat(), usage, 'data: [DONE]\n\n']) m.push(bytes(part));
    expect(m.tokens).toBe(2);
    const { m: m2 } = meter();
    for (const part of [text('a'), text(''), text('b'), text('c')]) m2.push(bytes(part));
    expect(m2.tokens).toBe(3);
  });

  it('handles a stream split anywhere, a UTF-8 character and CRLF included', () => {
    const stream = bytes([opening, chat('é€'), chat('🙂'), text('x'), 'data: [DONE]\n\n'].join('').replace(/\n/g, '\r\n'));
    for (const size of [1, 2, 3, 7]) {
      const { m } = meter();
      for (let i = 0; i < stream.length; i += size) m.push(stream.slice(i, i + size));
      expect(m.tokens, `pieces of ${size} bytes`).toBe(3);
    }
  });

  it('ignores comments, other fields, unparsable data; joins multi-line data', () => {
    const { m } = meter();
    m.push(bytes(': keep-alive\n\nevent: message\nid: 7\nretry: 10\n\ndata: {not json\n\ndata: {"choices":\ndata: [{"text":"hi"}]}\n\n'));
    expect(m.tokens).toBe(1);
  });

  it('an event not terminated by a blank line is not counted yet', () => {
    const { m } = meter();
    m.push(bytes(chat('a').trimEnd()));
    expect(m.tokens).toBe(0);
    m.push(bytes('\n\n'));
    expect(m.tokens).toBe(1);
  });

  it('times the first and last tokens; tokens per second from the second on', () => {
    const { clock, m } = meter();
    clock.t = 100;
    m.push(bytes(opening));
    expect(m.firstTokenAt).toBeUndefined();
    clock.t = 250;
    m.push(bytes(chat('a')));
    expect(m.tokensPerSecond()).toBeUndefined();
    clock.t = 750;
    m.push(bytes(chat('b') + chat('c')));
    expect([m.firstTokenAt, m.lastTokenAt, m.tokens]).toEqual([250, 750, 3]);
    expect(m.tokensPerSecond()).toBe(4); // 2 tokens after the first in 0.5 s
  });

  it('no rate when every token came at once', () => {
    const { m } = meter();
    m.push(bytes(chat('a') + chat('b')));
    expect(m.tokensPerSecond()).toBeUndefined();
  });

  it('does not parse an event larger than its limit (the stream passes untouched anyway)', () => {
    const { m } = meter();
    m.push(bytes(`data: {"choices":[{"text":"${'x'.repeat(1 << 20)}"}]}\n\n`));
    m.push(bytes(chat('a')));
    expect(m.tokens).toBe(1);
  });
});
