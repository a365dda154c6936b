// Response and stream-chunk builders for both endpoints, behind one small interface so
// the request handler does not care which endpoint it serves.
import type { FinishReason } from './generate.ts';

export type Endpoint = 'chat_completions' | 'completions';

export type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

export type ResponseMeta = { id: string; created: number; model: string };

export type Dialect = {
  idPrefix: string;
  /** Chunk sent before the first token, if the protocol has one. */
  opening(meta: ResponseMeta): object | undefined;
  token(meta: ResponseMeta, text: string): object;
  closing(meta: ResponseMeta, finishReason: FinishReason): object;
  usageChunk(meta: ResponseMeta, usage: Usage): object;
  whole(meta: ResponseMeta, text: string, finishReason: FinishReason, usage: Usage): object;
};

export function usage(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function chatChunk(meta: ResponseMeta, delta: object, finishReason: FinishReason | null): object {
  return {
    ...meta,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

const chat: Dialect = {
  idPrefix: 'chatcmpl-',
  opening: (meta) => chatChunk(meta, { role: 'assistant', content: '' }, null),
  token: (meta, text) => chatChunk(meta, { content: text }, null),
  closing: (meta, finishReason) => chatChunk(meta, {}, finishReason),
  usageChunk: (meta, u) => ({ ...meta, object: 'chat.completion.chunk', choices: [], usage: u }),
  whole: (meta, text, finishReason, u) => ({
    ...meta,
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: finishReason }],
    usage: u,
  }),
};

function textChunk(meta: ResponseMeta, text: string, finishReason: FinishReason | null): object {
  return { ...meta, object: 'text_completion', choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }] };
}

const text: Dialect = {
  idPrefix: 'cmpl-',
  opening: () => undefined,
  token: (meta, t) => textChunk(meta, t, null),
  closing: (meta, finishReason) => textChunk(meta, '', finishReason),
  usageChunk: (meta, u) => ({ ...meta, object: 'text_completion', choices: [], usage: u }),
  whole: (meta, t, finishReason, u) => ({ ...textChunk(meta, t, finishReason), usage: u }),
};

export const dialects: Record<Endpoint, Dialect> = { chat_completions: chat, completions: text };

export function modelList(model: string, created: number): object {
  return { object: 'list', data: [{ id: model, object: 'model', created, owned_by: 'modeldock' }] };
}
