// A small Server-Sent Events client, as a browser or SDK would read the stream: bytes
// arrive in arbitrary pieces, lines and even UTF-8 characters may be split across them.
// Reusable by any test that talks to an OpenAI-compatible streaming endpoint.

import { SseParser, type SseEvent } from '../../schema/sse.ts';

// The parser is the project's one (schema/sse.ts); re-exported for the suites that feed it directly.
export { SseParser, type SseEvent };

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
