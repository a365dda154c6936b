import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser } from './sse.ts';

/** Feeds `pieces` one after another, as a streaming decoder hands them over; the events' data. */
const events = (pieces: string[]): string[] => {
  const p = new SseParser();
  return pieces.flatMap((piece) => p.push(piece).map((e) => e.data));
};
const data = (p: SseParser, text: string) => p.push(text).map((e) => e.data);

const WIRE =
  ': keep-alive\r\n' +
  'data: {"a":"café→🙂"}\r\n\r\n' +
  'event: note\ndata: line one\ndata:line two\nid: 7\nretry: 10\n\n' +
  'data\r\rdata: [DONE]\n\n' +
  'data: unterminated';
const EXPECTED = ['{"a":"café→🙂"}', 'line one\nline two', '', '[DONE]'];

describe('SseParser', () => {
  it('keeps the data of each event; comments, event, id and retry are dropped; an unterminated event is not dispatched', () => {
    expect(events([WIRE])).toEqual(EXPECTED);
  });

  it('a blank line without data dispatches nothing', () => {
    expect(events(['\n\n: ping\n\nevent: x\n\n'])).toEqual([]);
  });

  it('"\\r\\n" split between two pieces is one line end, not two', () => {
    expect(events(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual(['a\nb']);
  });

  it('an event completes only when its blank line arrives', () => {
    const p = new SseParser();
    expect(data(p, 'data: hel')).toEqual([]);
    expect(data(p, 'lo\n')).toEqual([]);
    expect(data(p, '\n')).toEqual(['hello']);
  });

  it('the same events however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(WIRE.length), { maxLength: 12 }), (cuts) => {
        const at = [0, ...[...new Set(cuts)].sort((a, b) => a - b), WIRE.length];
        const pieces = at.slice(1).map((end, i) => WIRE.slice(at[i], end));
        expect(events(pieces)).toEqual(EXPECTED);
      }),
    );
  });
});
