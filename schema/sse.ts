// Server-Sent Events, read incrementally (WHATWG HTML, "event stream interpretation"): the body
// arrives in pieces cut anywhere — inside a line, between "\r" and "\n", inside a UTF-8 character
// (the caller decodes with a streaming TextDecoder and feeds the text). Pure. The one parser of
// every reader of an OpenAI-compatible stream: the CLI (`modeldock chat`), the gateway's token
// meter, and the tests' SSE client.

export type SseEvent = { event: string; data: string; id: string | undefined };

export interface SseParserOptions {
  /**
   * Bound on what one event may hold (its data, and an unfinished line): an event over it is
   * dropped, not returned, and a longer line is cut there — for a reader that must not hold an
   * endless line of someone else's stream (the gateway). Default: no bound.
   */
  maxEventChars?: number;
}

export class SseParser {
  readonly #max: number;
  #line = '';
  #data: string[] = [];
  #dataChars = 0;
  #event = '';
  #id: string | undefined;
  /** The last piece ended with "\r": a "\n" at the start of the next one ends the same line. */
  #afterCr = false;

  constructor(opts: SseParserOptions = {}) {
    this.#max = opts.maxEventChars ?? Infinity;
  }

  /** Feeds decoded text; returns every event it completed. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let pos = this.#afterCr && text.startsWith('\n') ? 1 : 0;
    this.#afterCr = false;
    while (pos < text.length) {
      const end = lineEnd(text, pos);
      if (end < 0) {
        if (this.#line.length < this.#max) this.#line += text.slice(pos);
        break;
      }
      const line = this.#line + text.slice(pos, end);
      this.#line = '';
      pos = end + 1;
      if (text[end] === '\r') {
        if (pos === text.length) this.#afterCr = true;
        else if (text[pos] === '\n') pos++;
      }
      const event = this.#field(line);
      if (event) events.push(event);
    }
    return events;
  }

  /** One line: a blank line dispatches the event; `data:`, `event:` and `id:` add to it; comments and the rest are ignored. */
  #field(line: string): SseEvent | undefined {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return undefined; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') {
      this.#dataChars += value.length;
      if (this.#dataChars <= this.#max) this.#data.push(value);
    } else if (name === 'event') this.#event = value;
    else if (name === 'id' && !value.includes('\0')) this.#id = value;
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const data = this.#data;
    const event = this.#event || 'message';
    const tooLong = this.#dataChars > this.#max;
    this.#data = [];
    this.#dataChars = 0;
    this.#event = '';
    return data.length === 0 || tooLong ? undefined : { event, data: data.join('\n'), id: this.#id };
  }
}

function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (lf < 0) return cr;
  if (cr < 0) return lf;
  return Math.min(lf, cr);
}
