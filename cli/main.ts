#!/usr/bin/env node
// The `modeldock` command (package.json "bin"; `npx modeldock …` from the repository).
// Wires the real process into run(): streams, environment, fetch, clock, files.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { styleText } from 'node:util';
import { run, type OutStream } from './run.ts';

const stream = (s: NodeJS.WriteStream): OutStream => ({
  write: (text) => void s.write(text),
  isTTY: Boolean(s.isTTY),
  // styleText checks the stream itself: no colours when it is not a TTY, or NO_COLOR / NODE_DISABLE_COLORS is set.
  style: (colour, text) => styleText(colour, text, { stream: s }),
});

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

process.exitCode = await run(process.argv.slice(2), {
  stdout: stream(process.stdout),
  stderr: stream(process.stderr),
  env: process.env,
  fetch,
  now: () => new Date(),
  sleep: (ms) => sleep(ms),
  readFile: (path) => (path === '-' ? readStdin() : readFile(path, 'utf8')),
  newIdempotencyKey: () => `cli-${randomUUID()}`,
  every(ms, tick) {
    const t = setInterval(tick, ms);
    return () => clearInterval(t);
  },
  onInterrupt(handler) {
    process.once('SIGINT', handler);
    return () => void process.off('SIGINT', handler);
  },
  version,
});
