// OpenAI-compatible request schemas and the OpenAI error body. Unknown fields are accepted
// and ignored (clients send many); `null` counts as "not set", as the OpenAI API does.
import { z } from 'zod';

export const MAX_TOKENS_LIMIT = 1_000_000;

const common = {
  model: z.string().min(1),
  max_tokens: z.number().int().min(1).max(MAX_TOKENS_LIMIT).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  seed: z.number().int().nullish(),
  n: z.literal(1, { error: 'only n=1 is supported' }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
};

const textPart = z.object({ type: z.literal('text'), text: z.string() });

const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(textPart)]).nullish(),
});

export const chatCompletionRequest = z.object({
  ...common,
  messages: z.array(message).min(1),
  max_completion_tokens: z.number().int().min(1).max(MAX_TOKENS_LIMIT).nullish(),
});

export const completionRequest = z.object({
  ...common,
  prompt: z.union([z.string(), z.array(z.string()).length(1)]),
});

export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;
export type CompletionRequest = z.infer<typeof completionRequest>;

/** What the generator needs, whichever endpoint the request came through. */
export type Job = {
  model: string;
  prompt: string;
  seed: number;
  maxTokens: number | undefined;
  stream: boolean;
  includeUsage: boolean;
};

export function chatJob(request: ChatCompletionRequest): Job {
  const prompt = request.messages
    .map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text).join('')}`)
    .join('\n');
  return toJob(request, prompt, request.max_completion_tokens ?? request.max_tokens);
}

export function completionJob(request: CompletionRequest): Job {
  const prompt = typeof request.prompt === 'string' ? request.prompt : (request.prompt[0] ?? '');
  return toJob(request, prompt, request.max_tokens ?? 16); // the legacy endpoint defaults to 16
}

function toJob(request: ChatCompletionRequest | CompletionRequest, prompt: string, maxTokens: number | null | undefined): Job {
  return {
    model: request.model,
    prompt,
    seed: request.seed ?? 0,
    maxTokens: maxTokens ?? undefined,
    stream: request.stream ?? false,
    includeUsage: request.stream_options?.include_usage ?? false,
  };
}

export type OpenAiError = {
  error: { message: string; type: string; param: string | null; code: string | null };
};

export function openAiError(message: string, type: string, param: string | null = null, code: string | null = null): OpenAiError {
  return { error: { message, type, param, code } };
}

/** `['messages', 0, 'role']` → `messages[0].role` */
export function formatParam(path: readonly PropertyKey[]): string | null {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || null;
}

export function validationError(error: z.ZodError): OpenAiError {
  const issue = error.issues[0];
  const param = issue ? formatParam(issue.path) : null;
  const message = issue ? `${param ?? 'body'}: ${issue.message}` : 'invalid request';
  return openAiError(message, 'invalid_request_error', param, 'invalid_value');
}
