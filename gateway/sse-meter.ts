// Counts the tokens of an OpenAI-style SSE stream as it passes through the gateway, without
// holding it: bytes arrive in arbitrary pieces (a line, even a UTF-8 character, may be split),
// so the meter keeps only the unfinished line and the current event's data (schema/sse.ts's
// parser, bounded). An event counts as a token when its JSON carries content: a chat chunk's
// choices[].delta.content or a completion chunk's choices[].text, non-empty (the role-only
// opening chunk and the closing chunk do not).
import { SseParser } from '../schema/sse.ts';

/** An event larger than this is not parsed (not counted); the stream itself passes untouched. */
const MAX_EVENT_CHARS = 1 << 20;

export class SseMeter {
  readonly #now: () => number;
  readonly #decoder = new TextDecoder();
  readonly #parser = new SseParser({ maxEventChars: MAX_EVENT_CHARS });
  tokens = 0;
  firstTokenAt: number | undefined;
  lastTokenAt: number | undefined;

  constructor(now: () => number) {
    this.#now = now;
  }

  push(chunk: Uint8Array): void {
    for (const { data } of this.#parser.push(this.#decoder.decode(chunk, { stream: true }))) {
      if (data === '[DONE]' || !carriesContent(data)) continue;
      const at = this.#now();
      this.tokens += 1;
      this.firstTokenAt ??= at;
      this.lastTokenAt = at;
    }
  }

  /** (tokens − 1) / seconds between the first and the last token; undefined below two tokens. */
  tokensPerSecond(): number | undefined {
    if (this.tokens < 2 || this.firstTokenAt === undefined || this.lastTokenAt === undefined) return undefined;
    const seconds = (this.lastTokenAt - this.firstTokenAt) / 1000;
    return seconds > 0 ? (this.tokens - 1) / seconds : undefined;
  }
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
