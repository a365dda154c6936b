import { describe, expect, test } from 'vitest';
import { NATURAL_LENGTH, countPromptTokens, generateTokens, hashPrompt, mulberry32, startGeneration } from './generate.ts';

describe('generateTokens', () => {
  test('same prompt and seed give the same tokens', () => {
    const a = generateTokens({ prompt: 'tell me a story', seed: 7, maxTokens: 40 });
    const b = generateTokens({ prompt: 'tell me a story', seed: 7, maxTokens: 40 });
    expect(a).toEqual(b);
  });

  test.each([
    ['a different seed', { prompt: 'tell me a story', seed: 8 }],
    ['a different prompt', { prompt: 'tell me a poem', seed: 7 }],
  ])('%s gives different tokens', (_, other) => {
    const a = generateTokens({ prompt: 'tell me a story', seed: 7, maxTokens: 40 }).tokens.join('');
    const b = generateTokens({ ...other, maxTokens: 40 }).tokens.join('');
    expect(b).not.toBe(a);
  });

  test.each([1, 5, 300])('max_tokens=%i gives exactly that many tokens, finish_reason length', (maxTokens) => {
    const { tokens, finishReason } = generateTokens({ prompt: 'x', maxTokens });
    expect(tokens).toHaveLength(maxTokens);
    expect(finishReason).toBe('length');
  });

  test('without max_tokens the natural length is bounded and ends with stop', () => {
    for (let seed = 0; seed < 50; seed++) {
      const { tokens, finishReason } = generateTokens({ prompt: 'hello', seed });
      expect(tokens.length).toBeGreaterThanOrEqual(NATURAL_LENGTH.min);
      expect(tokens.length).toBeLessThanOrEqual(NATURAL_LENGTH.max);
      expect(finishReason).toBe('stop');
    }
  });

  test('a longer generation starts with the shorter one (tokens are a prefix stream)', () => {
    const short = generateTokens({ prompt: 'p', seed: 1, maxTokens: 10 }).tokens;
    const long = generateTokens({ prompt: 'p', seed: 1, maxTokens: 30 }).tokens;
    expect(long.slice(0, 10)).toEqual(short);
  });

  test('tokens after the first carry their leading space or are a full stop', () => {
    const { tokens } = generateTokens({ prompt: 'p', maxTokens: 200 });
    expect(tokens[0]).not.toMatch(/^\s/);
    for (const token of tokens.slice(1)) expect(token === '.' || token.startsWith(' ')).toBe(true);
  });

  test('the token stream is lazy and never ends', () => {
    const { tokens } = startGeneration({ prompt: 'p', maxTokens: 1 });
    for (let i = 0; i < 10_000; i++) expect(tokens.next().done).toBe(false);
  });
});

test('hashPrompt, mulberry32 and the word stream are stable (golden values)', () => {
  expect(hashPrompt('abc', 1)).toBe(994547990);
  expect(hashPrompt('abc', 2)).not.toBe(994547990);
  const random = mulberry32(42);
  expect(random()).toBe(0.6011037519201636); // the reference mulberry32 sequence for seed 42
  const text = generateTokens({ prompt: 'golden', seed: 1, maxTokens: 6 }).tokens.join('');
  expect(text).toBe('quiet cache fast its and between');
});

test('countPromptTokens counts words', () => {
  expect(countPromptTokens('  hello   big world\n')).toBe(3);
  expect(countPromptTokens('')).toBe(0);
});
