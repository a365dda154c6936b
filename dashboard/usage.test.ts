// The page's "how to call it": the curl command, as a POSIX shell reads it, passes curl exactly the
// URL, the headers and the body — the key only as $MODELDOCK_KEY — whatever the endpoint holds;
// copying reports whether it worked.
import { execFileSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { chatUrl, copyText, curlExample, EXAMPLE_MODEL, shellQuote } from './public/assets/usage.js';

/** The words a shell makes of `command` (its first word replaced by printf, one word a line), with MODELDOCK_KEY set. */
function shellWords(command: string, key: string): string[] {
  const [first, ...rest] = command.split(' ');
  expect(first).toBe('curl');
  const out = execFileSync('sh', ['-c', `printf '%s\\n' ${rest.join(' ')}`], { env: { PATH: process.env.PATH, MODELDOCK_KEY: key }, encoding: 'utf8' });
  return out.replace(/\n$/, '').split('\n');
}

describe('curlExample', () => {
  const key = 'tenant-key-0123456789abcdef';

  it('streams a chat completion from the endpoint, with the key from $MODELDOCK_KEY', () => {
    const endpoint = 'https://api.example.test/v1/models/01JD5Y3QW5ZC8Y1G1M5N8D4X7K';
    const command = curlExample(endpoint);
    expect(command).toBe(
      `curl -N '${endpoint}/chat/completions' -H "Authorization: Bearer $MODELDOCK_KEY" -H 'Content-Type: application/json' -d '{"model":"default","messages":[{"role":"user","content":"Hello"}],"stream":true}'`,
    );
    expect(command).not.toContain(key);
    const words = shellWords(command, key);
    expect(words).toEqual(['-N', `${endpoint}/chat/completions`, '-H', `Authorization: Bearer ${key}`, '-H', 'Content-Type: application/json', '-d', expect.any(String)]);
    expect(JSON.parse(words[7]!)).toEqual({ model: EXAMPLE_MODEL, messages: [{ role: 'user', content: 'Hello' }], stream: true });
  });

  it('an endpoint with quotes, $(…) or spaces stays one word, expanded by nothing', () => {
    const endpoint = "http://x/'$(touch /tmp/owned)' `id` $HOME/";
    const words = shellWords(curlExample(endpoint, "it's"), key);
    expect(words[1]).toBe("http://x/'$(touch /tmp/owned)' `id` $HOME/chat/completions");
    expect(JSON.parse(words[7]!)).toMatchObject({ model: "it's" });
  });

  it('chatUrl: the endpoint with /chat/completions, a trailing slash or not', () => {
    expect(chatUrl('http://a/v1/models/X')).toBe('http://a/v1/models/X/chat/completions');
    expect(chatUrl('http://a/v1/models/X/')).toBe('http://a/v1/models/X/chat/completions');
    expect(shellQuote("a'b")).toBe(`'a'\\''b'`);
  });
});

describe('copyText', () => {
  it('writes the text to the clipboard', async () => {
    const writeText = vi.fn(async () => undefined);
    expect(await copyText('http://a/v1/models/X', { writeText })).toBe(true);
    expect(writeText).toHaveBeenCalledWith('http://a/v1/models/X');
  });

  it('false without a clipboard (not a secure context) or when the write is refused', async () => {
    expect(await copyText('x', undefined)).toBe(false);
    expect(await copyText('x', { writeText: async () => Promise.reject(new DOMException('Document is not focused.', 'NotAllowedError')) })).toBe(false);
  });
});
