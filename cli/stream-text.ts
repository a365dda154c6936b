// A model's reply made safe for the terminal as it streams: line breaks and tabs stay (a reply
// has paragraphs and code), every other control character goes, as printable() removes them from
// everything else the server sends (schema/text.ts). "\r\n" and a lone "\r" become "\n": a bare
// carriage return would let the reply overwrite what is already on the line.
// The reply comes in deltas cut anywhere: a "\r" at the end of one may be the start of a "\r\n",
// and a surrogate pair (an emoji) may be split between two; both are held back until the next
// delta so neither is doubled nor replaced. Pure.
import { printable } from '../schema/text.ts';

const KEPT = /([\n\t])/;

function clean(s: string): string {
  return s
    .replace(/\r\n?/g, '\n')
    .split(KEPT)
    .map((part) => (part === '\n' || part === '\t' ? part : printable(part)))
    .join('');
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

export class StreamText {
  #held = '';

  /** The printable text of `delta`, less what must wait for the next one. */
  push(delta: string): string {
    const s = this.#held + delta;
    const last = s.charCodeAt(s.length - 1);
    const hold = s.endsWith('\r') || isHighSurrogate(last) ? 1 : 0;
    this.#held = s.slice(s.length - hold);
    return clean(s.slice(0, s.length - hold));
  }

  /** What was held back, at the end of the reply. */
  end(): string {
    const s = this.#held;
    this.#held = '';
    return clean(s);
  }
}
