// Ambiguous JSON is refused before anything reads it: `JSON.parse` silently keeps the LAST of
// two equal keys (another parser — a proxy, a log pipeline, an auditor — may keep the first),
// and `__proto__` / `constructor` / `prototype` keys are how prototype pollution reaches code
// that merges objects. `ambiguity(text)` scans the text of a body that already parsed as JSON
// and names the first such key; the middleware turns it into a 400 `ambiguous_json`.
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.ts';

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

interface Frame {
  keys: Set<string> | null; // null: an array
  expectKey: boolean;
  path: string;
  lastKey: string;
}

const show = (key: string) => JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}…` : key);

/** The first duplicate or forbidden object key in a VALID JSON text, or undefined. */
export function ambiguity(text: string): string | undefined {
  const stack: Frame[] = [];
  const childPath = (): string => {
    const top = stack.at(-1);
    if (!top) return '$';
    return top.keys ? `${top.path}.${top.lastKey}` : `${top.path}[]`;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{' || ch === '[') {
      stack.push({ keys: ch === '{' ? new Set() : null, expectKey: ch === '{', path: childPath(), lastKey: '' });
    } else if (ch === '}' || ch === ']') {
      stack.pop();
    } else if (ch === ',') {
      const top = stack.at(-1);
      if (top?.keys) top.expectKey = true;
    } else if (ch === ':') {
      const top = stack.at(-1);
      if (top) top.expectKey = false;
    } else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string; // decodes escapes: "\u005f_proto__" is __proto__
        if (FORBIDDEN_KEYS.has(key)) return `key ${show(key)} is not allowed (at ${top.path})`;
        if (top.keys.has(key)) return `duplicate key ${show(key)} (at ${top.path})`;
        top.keys.add(key);
        top.lastKey = key;
      }
      i = j;
    }
  }
  return undefined;
}

/** Refuses a JSON body with a duplicate or prototype-polluting key (400); malformed JSON is left to the validator. */
export function unambiguousJson(): MiddlewareHandler {
  return async function unambiguousJsonMiddleware(c, next) {
    const text = await c.req.text();
    let valid = true;
    try {
      JSON.parse(text);
    } catch {
      valid = false;
    }
    const problem = valid ? ambiguity(text) : undefined;
    if (problem) throw new ApiError(400, 'ambiguous_json', `the request body is ambiguous JSON: ${problem}`);
    await next();
  };
}
