import { expect, test } from 'vitest';
import { chatCompletionRequest, chatJob, completionJob, completionRequest, formatParam, validationError } from './openai.ts';

test('chatJob flattens messages (string, text parts, null) into one prompt', () => {
  const request = chatCompletionRequest.parse({
    model: 'm',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hel' }, { type: 'text', text: 'lo' }] },
      { role: 'assistant', content: null },
    ],
    seed: 9,
    stream: true,
    stream_options: { include_usage: true },
    some_future_field: 'ignored',
  });
  expect(chatJob(request)).toEqual({
    model: 'm',
    prompt: 'system: be brief\nuser: hello\nassistant: ',
    seed: 9,
    maxTokens: undefined,
    stream: true,
    includeUsage: true,
  });
});

test.each([
  [{ max_tokens: 5 }, 5],
  [{ max_completion_tokens: 3, max_tokens: 5 }, 3],
  [{ max_tokens: null }, undefined],
])('chat max tokens from %o → %s', (fields, expected) => {
  const request = chatCompletionRequest.parse({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...fields });
  expect(chatJob(request).maxTokens).toBe(expected);
});

test('completionJob: array prompt of one, legacy default of 16 tokens, seed defaults to 0', () => {
  const job = completionJob(completionRequest.parse({ model: 'm', prompt: ['once'] }));
  expect(job).toMatchObject({ prompt: 'once', maxTokens: 16, seed: 0, stream: false });
});

test.each([
  [['messages', 0, 'role'], 'messages[0].role'],
  [['prompt'], 'prompt'],
  [[], null],
])('formatParam(%o) = %s', (path, expected) => {
  expect(formatParam(path)).toBe(expected);
});

test('validationError names the first bad field', () => {
  const parsed = completionRequest.safeParse({ model: 'm', prompt: 'x', n: 3 });
  if (parsed.success) throw new Error('expected failure');
  expect(validationError(parsed.error)).toEqual({
    error: { message: 'n: only n=1 is supported', type: 'invalid_request_error', param: 'n', code: 'invalid_value' },
  });
});
