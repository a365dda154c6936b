// Deterministic "model": a seeded PRNG picks words. Same prompt + seed → same tokens.
// No tokenizer: one token is one word (with its leading space) or a full stop.

export type FinishReason = 'stop' | 'length';

export type GenerationInput = { prompt: string; seed?: number; maxTokens?: number };

export type Generation = {
  /** How many tokens will be produced. */
  count: number;
  /** `length` when max_tokens decided the count, `stop` for the natural end. */
  finishReason: FinishReason;
  /** Infinite, lazy token stream; take `count` of them. */
  tokens: Iterator<string, never>;
};

export const NATURAL_LENGTH = { min: 16, max: 64 } as const;

const WORDS = [
  'the', 'model', 'dock', 'runs', 'a', 'quiet', 'cluster', 'of', 'tokens', 'that',
  'stream', 'through', 'slots', 'and', 'queues', 'while', 'operators', 'watch', 'metrics',
  'rise', 'fall', 'every', 'request', 'waits', 'its', 'turn', 'in', 'order', 'small', 'fast',
  'steady', 'cache', 'warm', 'bright', 'river', 'light', 'over', 'under', 'between', 'reply',
  'sends', 'back', 'words', 'café', 'naïve', 'déjà', 'vu', '→', 'über',
] as const;

/** FNV-1a over UTF-16 code units of `${seed}:${prompt}`. */
export function hashPrompt(prompt: string, seed: number): number {
  const text = `${seed}:${prompt}`;
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: tiny, fast, good enough for picking words. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function* words(random: () => number): Generator<string, never> {
  let first = true;
  for (;;) {
    if (!first && random() < 0.1) {
      yield '.';
      continue;
    }
    const word = WORDS[Math.floor(random() * WORDS.length)] ?? 'the';
    yield first ? word : ` ${word}`;
    first = false;
  }
}

/**
 * Plan a generation. With `maxTokens` the output has exactly that many tokens (like
 * vLLM's ignore_eos, handy for load tests); without it, a prompt-dependent natural length.
 */
export function startGeneration({ prompt, seed = 0, maxTokens }: GenerationInput): Generation {
  const random = mulberry32(hashPrompt(prompt, seed));
  const span = NATURAL_LENGTH.max - NATURAL_LENGTH.min + 1;
  const natural = NATURAL_LENGTH.min + Math.floor(random() * span);
  return {
    count: maxTokens ?? natural,
    finishReason: maxTokens === undefined ? 'stop' : 'length',
    tokens: words(random),
  };
}

/** Eager helper: the whole completion at once. */
export function generateTokens(input: GenerationInput): { tokens: string[]; finishReason: FinishReason } {
  const generation = startGeneration(input);
  const tokens: string[] = [];
  for (let i = 0; i < generation.count; i++) tokens.push(generation.tokens.next().value);
  return { tokens, finishReason: generation.finishReason };
}

/** Rough prompt size for `usage`: whitespace-separated words. */
export function countPromptTokens(prompt: string): number {
  return prompt.split(/\s+/).filter(Boolean).length;
}
