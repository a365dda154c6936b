// A small Server-Sent Events client, as a browser or SDK would read the stream: bytes
// arrive in arbitrary pieces, lines and even UTF-8 characters may be split across them.
// Reusable by any test that talks to an OpenAI-compatible streaming endpoint.

export type SseEvent = { event: string; data: string; id: string | undefined };

/** Incremental parser (WHATWG "event stream interpretation"); feed it decoded text. */
export class SseParser {
  #line = '';
  #data: string[] = [];
  #event = '';
  #id: string | undefined;
  #skipLeadingLf = false;

  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let pos = this.#skipLeadingLf && text.startsWith('\n') ? 1 : 0;
    this.#skipLeadingLf = false;
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
        if (pos === text.length) this.#skipLeadingLf = true; // a "\n" may follow in the next piece
        else if (text[pos] === '\n') pos++;
      }
      const event = this.#processLine(line);
      if (event) events.push(event);
    }
    return events;
  }

  #processLine(line: string): SseEvent | undefined {
    if (line === '') return this.#dispatch();
    if (line.startsWith(':')) return undefined; // comment / keep-alive
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) this.#id = value;
    return undefined;
  }

  #dispatch(): SseEvent | undefined {
    const data = this.#data;
    const event = this.#event || 'message';
    this.#data = [];
    this.#event = '';
    return data.length === 0 ? undefined : { event, data: data.join('\n'), id: this.#id };
  }
}

function lineEnd(text: string, from: number): number {
  const lf = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (lf < 0) return cr;
  if (cr < 0) return lf;
  return Math.min(lf, cr);
}

/** Read events from a fetch body. Breaking out of the loop cancels the body. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode()); // an unterminated last event is dropped, per spec
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

export type OpenAiStream = { chunks: Record<string, unknown>[]; text: string; done: boolean };

/** Parsed `data:` JSON chunks until `[DONE]`; `done` is false if the stream ended without it. */
export async function readOpenAiStream(body: ReadableStream<Uint8Array>): Promise<OpenAiStream> {
  const chunks: Record<string, unknown>[] = [];
  for await (const event of readSse(body)) {
    if (event.data === '[DONE]') return { chunks, text: chunksText(chunks), done: true };
    chunks.push(JSON.parse(event.data) as Record<string, unknown>);
  }
  return { chunks, text: chunksText(chunks), done: false };
}

type ChunkChoice = { text?: string; delta?: { content?: string } };

/** Concatenated generated text of chat (`delta.content`) or completion (`text`) chunks. */
export function chunksText(chunks: readonly Record<string, unknown>[]): string {
  return chunks
    .map((chunk) => {
      const choice = (chunk.choices as ChunkChoice[] | undefined)?.[0];
      return choice?.delta?.content ?? choice?.text ?? '';
    })
    .join('');
}
