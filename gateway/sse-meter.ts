// Counts the tokens of an OpenAI-style SSE stream as it passes through the gateway, without
// holding it: bytes arrive in arbitrary pieces (a line, even a UTF-8 character, may be split),
// so the meter keeps only the unfinished line and the current event's data. An event counts as
// a token when its JSON carries content: a chat chunk's choices[].delta.content or a completion
// chunk's choices[].text, non-empty (the role-only opening chunk and the closing chunk do not).

/** An event larger than this is not parsed (not counted); the stream itself passes untouched. */
const MAX_EVENT_CHARS = 1 << 20;

export class SseMeter {
  readonly #now: () => number;
  readonly #decoder = new TextDecoder();
  #line = '';
  #data: string[] = [];
  #dataChars = 0;
  #afterCr = false;
  tokens = 0;
  firstTokenAt: number | undefined;
  lastTokenAt: number | undefined;

  constructor(now: () => number) {
    this.#now = now;
  }

  push(chunk: Uint8Array): void {
    const text = this.#decoder.decode(chunk, { stream: true });
    let pos = 0;
    // A CR ends a line; a LF right after it (maybe in this piece) is part of the same line end.
    if (this.#afterCr && text.startsWith('\n')) pos = 1;
    this.#afterCr = false;
    while (pos < text.length) {
      const end = lineEnd(text, pos);
      if (end < 0) {
        if (this.#line.length < MAX_EVENT_CHARS) this.#line += text.slice(pos);
        break;
      }
      const line = this.#line + text.slice(pos, end);
      this.#line = '';
      pos = end + 1;
      if (text[end] === '\r') {
        if (pos === text.length) this.#afterCr = true;
        else if (text[pos] === '\n') pos += 1;
      }
      this.#onLine(line);
    }
  }

  /** (tokens − 1) / seconds between the first and the last token; undefined below two tokens. */
  tokensPerSecond(): number | undefined {
    if (this.tokens < 2 || this.firstTokenAt === undefined || this.lastTokenAt === undefined) return undefined;
    const seconds = (this.lastTokenAt - this.firstTokenAt) / 1000;
    return seconds > 0 ? (this.tokens - 1) / seconds : undefined;
  }

  #onLine(line: string): void {
    if (line === '') return this.#dispatch();
    if (!line.startsWith('data:')) return; // comments, event:, id:, retry:
    const value = line.startsWith('data: ') ? line.slice(6) : line.slice(5);
    this.#dataChars += value.length;
    if (this.#dataChars <= MAX_EVENT_CHARS) this.#data.push(value);
  }

  #dispatch(): void {
    const data = this.#data.join('\n');
    const tooLong = this.#dataChars > MAX_EVENT_CHARS;
    this.#data = [];
    this.#dataChars = 0;
    if (data === '' || data === '[DONE]' || tooLong || !carriesContent(data)) return;
    const at = this.#now();
    this.tokens += 1;
    this.firstTokenAt ??= at;
    this.lastTokenAt = at;
  }
}

function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (lf < 0) return cr;
  if (cr < 0) return lf;
  return Math.min(lf, cr);
}

function carriesContent(data: string): boolean {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    return false;
  }
  const choices = (event as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) return false;
  return choices.some((c: unknown) => {
    const choice = c as { delta?: { content?: unknown }; text?: unknown } | null;
    return nonEmpty(choice?.delta?.content) || nonEmpty(choice?.text);
  });
}

const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
