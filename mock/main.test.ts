// main.ts as a process: the failure knobs reach the server, the exit and the signal handler.
// Each test starts `node mock/main.ts` on port 0 and waits for its `listening` line.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, test } from 'vitest';
import { MIB } from './allocate.ts';

const MAIN = join(import.meta.dirname, 'main.ts');
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mock-main-'));
  dirs.push(dir);
  return dir;
}

/** Starts main.ts with `env` added; `lines` collects its JSON log lines (stdout and stderr). */
function start(env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', WARMUP_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null }));
  const listening = new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        const entry = JSON.parse(line) as Record<string, unknown>;
        lines.push(entry);
        if (entry.msg === 'listening') resolve(String(entry.url));
      });
    }
    void exited.then((e) => reject(new Error(`exited before listening: ${JSON.stringify(e)} ${JSON.stringify(lines)}`)));
  });
  listening.catch(() => {}); // a test that expects the exit does not wait for this
  return { child, lines, exited, listening };
}

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as unknown };
};

/** Resident set size of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kib) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

describe('mock/main.ts with the failure knobs', { timeout: 20_000 }, () => {
  test('a bad knob stops the start: exit 1, the variable named on stderr', async () => {
    const p = start({ MOCK_EXIT_CODE: '3', MOCK_ALLOCATE_MIB: 'lots' });
    expect(await p.exited).toEqual({ code: 1, signal: null });
    const error = p.lines.find((l) => l.msg === 'invalid_environment');
    expect(Object.keys((error?.issues as { properties: object }).properties).sort()).toEqual(['MOCK_ALLOCATE_MIB', 'MOCK_EXIT_CODE']);
  });

  test('MOCK_NEVER_READY: /readyz 503, /healthz 200', async () => {
    const p = start({ MOCK_NEVER_READY: 'true' });
    const url = await p.listening;
    expect(await get(`${url}/readyz`)).toEqual({ status: 503, body: { status: 'never_ready' } });
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
  });

  test('without knobs /readyz is 200 (the ordinary mock)', async () => {
    const url = await start({}).listening;
    expect(await get(`${url}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });
  });

  test('MOCK_EXIT_*: serves, then writes the termination message and exits with the code', async () => {
    const path = join(tempDir(), 'termination-log');
    const p = start({ MOCK_EXIT_AFTER_S: '1.5', MOCK_EXIT_CODE: '7', MOCK_EXIT_MESSAGE: 'planned crash', MOCK_TERMINATION_MESSAGE_PATH: path });
    const url = await p.listening;
    expect((await get(`${url}/healthz`)).status).toBe(200);
    expect(await p.exited).toEqual({ code: 7, signal: null });
    expect(readFileSync(path, 'utf8')).toBe('planned crash');
  });

  test('MOCK_EXIT_*: an unwritable termination path is logged, the exit code is still the one asked for', async () => {
    const dir = tempDir(); // a directory cannot be written as a file
    const p = start({ MOCK_EXIT_AFTER_S: '0', MOCK_EXIT_CODE: '42', MOCK_TERMINATION_MESSAGE_PATH: dir });
    expect(await p.exited).toEqual({ code: 42, signal: null });
    expect(p.lines.find((l) => l.msg === 'termination_message_failed')).toMatchObject({ path: dir, error: expect.stringMatching(/EISDIR/) });
  });

  test('MOCK_SHUTDOWN_DELAY_S: after SIGTERM unready but serving, exit 0 only after the delay', async () => {
    const p = start({ MOCK_SHUTDOWN_DELAY_S: '3' }); // long enough to probe in, on a loaded machine
    const url = await p.listening;
    const signalled = performance.now();
    p.child.kill('SIGTERM');
    await expect.poll(async () => (await get(`${url}/readyz`)).status, { timeout: 2_500 }).toBe(503);
    expect(await get(`${url}/readyz`)).toEqual({ status: 503, body: { status: 'draining' } });
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await p.exited).toEqual({ code: 0, signal: null });
    expect(performance.now() - signalled).toBeGreaterThanOrEqual(3_000);
    expect(p.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['signal', 'shutdown_delay', 'draining', 'closed']));
  });

  test('MOCK_ALLOCATE_MIB: the memory is resident (RSS, not just reserved)', async () => {
    const plain = start({});
    const big = start({ MOCK_ALLOCATE_MIB: '96' });
    await Promise.all([plain.listening, big.listening]);
    const extra = rssBytes(big.child.pid ?? 0) - rssBytes(plain.child.pid ?? 0);
    expect(extra).toBeGreaterThan(90 * MIB);
    expect(big.lines.find((l) => l.msg === 'allocated')).toMatchObject({ mib: 96 });
  });
});
