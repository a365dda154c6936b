// No control character the server sends reaches the terminal: a pod's termination message (the
// tenant's), a registry's error, an error message — every string of every answer is made
// printable before `get`, `list`, `--wait` or an error prints it.
import { describe, expect, it } from 'vitest';
import { admission, runCli } from './test-fixtures.ts';

/** ESC sequences (clear screen, set title, hide text), BEL, a C1 CSI, a bidi override. */
const HOSTILE = '\u001b[2J\u001b]0;owned\u0007\u001b[8m\u009b31m\u202e';
/** Control characters other than the line breaks and tabs the CLI prints itself. */
// eslint-disable-next-line no-control-regex -- looking for control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const hostile = admission({
  name: `chat${HOSTILE}`,
  state: 'delivered',
  endpoint: `http://x${HOSTILE}`,
  lastError: `ClusterPolicy said ${HOSTILE}no`,
  lastFailure: { reason: `CrashLoopBackOff${HOSTILE}`, pod: `md-1${HOSTILE}`, exitCode: 1, message: `${'"'.repeat(64)}${HOSTILE}weights corrupt`, at: '2026-12-01T10:04:00.000Z' },
  releaseBlockedPods: [`p${HOSTILE}`],
});

const one = (status: number, body: unknown) => [{ status, body }];
const byId = `/requests/${hostile.id}`;

describe('the CLI prints no control character a server sent', () => {
  it('get: the admission, its last failure and last error', async () => {
    const { out, code } = await runCli(['get', hostile.id], { [`GET ${byId}`]: one(200, hostile) });
    expect(code).toBe(0);
    expect(out).toContain('weights corrupt');
    expect(out).toContain('ClusterPolicy said [2J]0;owned[8m31mno');
    expect(out).not.toMatch(CONTROL);
  });

  it('list, and -o yaml / -o json', async () => {
    for (const output of [[], ['-o', 'yaml'], ['-o', 'json']]) {
      const { out, code } = await runCli(['list', ...output], { 'GET /requests': one(200, { items: [hostile], nextCursor: null }) });
      expect(code).toBe(0);
      expect(out).toContain('chat');
      expect(out).not.toMatch(CONTROL);
      expect(out).not.toMatch(/\\u001b|\\e|\\x1b/i);
    }
  });

  it('a wait that ends in failure: the failure report', async () => {
    const { err, out, code } = await runCli(['delete', hostile.id, '--wait', '--timeout', '5s'], {
      [`DELETE ${byId}`]: one(200, { ...hostile, state: 'conflict' }),
      [`GET ${byId}`]: one(200, { ...hostile, state: 'conflict' }),
    });
    expect(code).not.toBe(0);
    expect(out + err).toContain('conflict');
    expect(out + err).not.toMatch(CONTROL);
  });

  it("an error answer: the API's message on one line, without control characters", async () => {
    const { err, code } = await runCli(['get', hostile.id], { [`GET ${byId}`]: one(404, { error: { code: 'not_found', message: `no such admission${HOSTILE}\n2nd line` } }) });
    expect(code).not.toBe(0);
    expect(err).toContain('no such admission');
    expect(err).not.toMatch(CONTROL);
    expect(err.trimEnd().split('\n')).toHaveLength(1);
  });
});
