// @ts-check
// How a tenant calls its model, as the page shows it: the endpoint's chat URL and a curl command
// to paste into a shell, and copying either to the clipboard. The command names the key as
// $MODELDOCK_KEY, never its value: the page holds the key, but what it shows may be shared.
// Pure but for the clipboard, which is passed in.

/** The body's `model` in the example: the edge passes it to the tenant's server as is, and only that server knows its models (the CLI's default too). */
export const EXAMPLE_MODEL = 'default';

/** `s` as one shell word: in single quotes, a quote inside written as '\'' (nothing in it is expanded). @param {string} s */
export function shellQuote(s) {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The chat completions URL of an admission's endpoint (`<API>/v1/models/<id>`). @param {string} endpoint */
export function chatUrl(endpoint) {
  return `${endpoint.replace(/\/+$/, '')}/chat/completions`;
}

/** One line, to paste into a POSIX shell with MODELDOCK_KEY set; streams the reply (-N: no buffering). @param {string} endpoint @param {string} [model] */
export function curlExample(endpoint, model = EXAMPLE_MODEL) {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }], stream: true });
  return `curl -N ${shellQuote(chatUrl(endpoint))} -H "Authorization: Bearer $MODELDOCK_KEY" -H 'Content-Type: application/json' -d ${shellQuote(body)}`;
}

/**
 * Copies `text`; false when this browser cannot: no Clipboard API (a page not served over HTTPS
 * or from localhost has none) or the write refused (permission, the page not focused).
 * @param {string} text
 * @param {Pick<Clipboard, 'writeText'> | undefined} clipboard
 * @returns {Promise<boolean>}
 */
export async function copyText(text, clipboard) {
  if (!clipboard || typeof clipboard.writeText !== 'function') return false;
  try {
    await clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
