// Server-Sent Events, read incrementally: the response body arrives in pieces cut anywhere —
// inside a line, between "\r" and "\n", inside a UTF-8 character (the caller decodes with a
// streaming TextDecoder). Only what an OpenAI-compatible stream uses is kept: the data of each
// event (its `data:` lines joined with "\n"); comments (keep-alives), `event:`, `id:` and
// `retry:` are read and dropped. Pure (WHATWG HTML, "event stream interpretation").

export class SseParser {
  #line = '';
  #data: string[] = [];
  /** The last piece ended with "\r": a "\n" at the start of the next one ends the same line. */
  #afterCr = false;

  /** Feeds decoded text; returns the data of every event it completed. */
  push(text: string): string[] {
    const events: string[] = [];
    let pos = this.#afterCr && text.startsWith('\n') ? 1 : 0;
    this.#afterCr = false;
    while (pos < text.length) {
      const end = lineEnd(text, pos);
      if (end < 0) {
        this.#line += text.slice(pos);
        break;
      }
      const line = this.#line + text.slice(pos, end);
      this.#line = '';
      pos = end + 1;
      if (text[end] === '\r') {
        if (pos === text.length) this.#afterCr = true;
        else if (text[pos] === '\n') pos++;
      }
      const data = this.#field(line);
      if (data !== undefined) events.push(data);
    }
    return events;
  }

  /** One line: a blank line dispatches the event, `data:` adds to it, anything else is ignored. */
  #field(line: string): string | undefined {
    if (line === '') {
      if (this.#data.length === 0) return undefined;
      const data = this.#data.join('\n');
      this.#data = [];
      return data;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return undefined; // a comment
    const name = colon < 0 ? line : line.slice(0, colon);
    if (name !== 'data') return undefined;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    this.#data.push(value.startsWith(' ') ? value.slice(1) : value);
    return undefined;
  }
}

function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (lf < 0) return cr;
  if (cr < 0) return lf;
  return Math.min(lf, cr);
}
