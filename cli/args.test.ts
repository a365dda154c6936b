import { describe, expect, it } from 'vitest';
import { DEFAULTS, parseCommand, parseDuration, UsageError } from './args.ts';

const env = { MODELDOCK_URL: 'http://127.0.0.1:8787', MODELDOCK_KEY: 'k-0123456789abcdef' };
const usage = (argv: string[], e: Record<string, string | undefined> = env) => {
  try {
    parseCommand(argv, e);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`no usage error for ${argv.join(' ')}`);
};

describe('parseCommand', () => {
  it('takes the connection from the environment, flags win', () => {
    expect(parseCommand(['quota'], env)).toEqual({ kind: 'quota', conn: { url: 'http://127.0.0.1:8787', key: env.MODELDOCK_KEY, requestTimeoutMs: DEFAULTS.requestTimeoutMs }, output: 'table' });
    const c = parseCommand(['quota', '--url', 'https://api.example.test/', '--key', 'other-key-0123456789', '--request-timeout', '2s', '-o', 'json'], env);
    expect(c).toMatchObject({ conn: { url: 'https://api.example.test', key: 'other-key-0123456789', requestTimeoutMs: 2000 }, output: 'json' });
  });
  it('submit: flags, repeatable env/arg, wait with timeout and interval', () => {
    const c = parseCommand(['submit', '--name', 'chat', '--image', 'img:1', '--replicas', '2', '--cpu', '500m', '--env', 'A=1', '--env', 'B=x=y', '--arg=--x', '-w', '--timeout', '2m', '--interval', '250ms'], env);
    expect(c).toMatchObject({
      kind: 'submit',
      spec: { name: 'chat', image: 'img:1', replicas: 2, cpu: '500m', env: ['A=1', 'B=x=y'], args: ['--x'] },
      wait: { wait: true, timeoutMs: 120_000, intervalMs: 250 },
    });
  });
  it('get/delete take one id; list --all; help and version', () => {
    expect(parseCommand(['get', '01ABC'], env)).toMatchObject({ kind: 'get', id: '01ABC' });
    expect(parseCommand(['delete', '01ABC', '--wait'], env)).toMatchObject({ kind: 'delete', id: '01ABC', wait: { wait: true } });
    expect(parseCommand(['list', '--all', '-o', 'yaml'], env)).toMatchObject({ kind: 'list', all: true, output: 'yaml' });
    expect(parseCommand([], {})).toEqual({ kind: 'help', missing: true });
    expect(parseCommand(['help', 'quota'], {})).toEqual({ kind: 'help', topic: 'quota' });
    expect(parseCommand(['submit', '--help'], env)).toEqual({ kind: 'help', topic: 'submit' });
    expect(parseCommand(['--version'], {})).toEqual({ kind: 'version' });
  });
  it('scale takes an id and the replicas, --wait and an Idempotency-Key', () => {
    expect(parseCommand(['scale', '01ABC', '3', '--wait', '--idempotency-key', 'k1'], env)).toMatchObject({
      kind: 'scale',
      id: '01ABC',
      replicas: 3,
      idempotencyKey: 'k1',
      wait: { wait: true },
    });
    expect(parseCommand(['scale', '01ABC', '0'], env)).toMatchObject({ kind: 'scale', replicas: 0, wait: { wait: false } });
    expect(() => parseCommand(['scale', '01ABC'], env)).toThrow(/an id and a number of replicas/);
    expect(() => parseCommand(['scale', '01ABC', 'two'], env)).toThrow(/replicas must be a whole number/);
    expect(() => parseCommand(['scale', '01ABC', '-1'], env)).toThrow();
  });
  it('chat: the id, then the message words (or none: standard input), the model from --model, MODELDOCK_MODEL or "default"', () => {
    expect(parseCommand(['chat', '01ABC', 'Hello', 'there'], env)).toEqual({
      kind: 'chat',
      conn: { url: env.MODELDOCK_URL, key: env.MODELDOCK_KEY, requestTimeoutMs: DEFAULTS.requestTimeoutMs },
      id: '01ABC',
      message: 'Hello there',
      model: 'default',
      system: undefined,
      maxTokens: undefined,
    });
    expect(parseCommand(['chat', '01ABC'], env)).toMatchObject({ kind: 'chat', id: '01ABC', message: undefined });
    expect(parseCommand(['chat', '01ABC', 'hi'], { ...env, MODELDOCK_MODEL: 'mock-model' })).toMatchObject({ model: 'mock-model' });
    expect(parseCommand(['chat', '01ABC', 'hi'], { ...env, MODELDOCK_MODEL: '' })).toMatchObject({ model: 'default' });
    expect(parseCommand(['chat', '01ABC', '--model', 'llama', '--system', 'be brief', '--max-tokens', '64', '--', '-x'], { ...env, MODELDOCK_MODEL: 'mock-model' })).toMatchObject({
      model: 'llama',
      system: 'be brief',
      maxTokens: 64,
      message: '-x',
    });
    expect(parseCommand(['chat', '--help'], env)).toEqual({ kind: 'help', topic: 'chat' });
  });
  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [['chat'], /chat takes an id, then the message/],
    [['chat', 'x', 'hi', '--max-tokens', '0'], /--max-tokens must be a whole number from 1/],
    [['chat', 'x', 'hi', '--model', ''], /--model must not be empty/],
    [['chat', 'x', 'hi', '-o', 'json'], /Unknown option '-o'/],
    [['quota', '--bogus'], /Unknown option '--bogus'/],
    [['get'], /exactly one id/],
    [['get', 'a', 'b'], /exactly one id/],
    [['quota', 'extra'], /takes no arguments/],
    [['list', '-o', 'xml'], /table, json or yaml/],
    [['list', '--limit', '0'], /--limit must be a whole number from 1 to 100/],
    [['list', '--all', '--limit', '5'], /exclude each other/],
    [['submit'], /needs a spec/],
    [['submit', '--name', 'a', '--replicas', 'two'], /--replicas must be a whole number/],
    [['submit', '--name', 'a', '--env', 'NOVALUE'], /--env must be NAME=value/],
    [['submit', '--name', 'a', '--timeout', '5m'], /only apply with --wait/],
    [['delete', 'x', '--wait', '--timeout', 'soon'], /--timeout must be a duration/],
    [['submit', '--name', 'a', '--arg', '--x'], /ambiguous/],
  ])('%j → usage error', (argv, msg) => expect(usage(argv)).toMatch(msg));
  it('names what is missing from the connection, and never echoes the key', () => {
    expect(usage(['quota'], {})).toMatch(/MODELDOCK_URL/);
    expect(usage(['quota'], { MODELDOCK_URL: 'http://127.0.0.1:1' })).toMatch(/MODELDOCK_KEY/);
    expect(usage(['quota'], { ...env, MODELDOCK_URL: 'ftp://x' })).toMatch(/http/);
    const m = usage(['quota'], { ...env, MODELDOCK_URL: 'http://user:secret-pass@127.0.0.1:1' });
    expect(m).toMatch(/must not carry credentials/);
    expect(m).not.toContain('secret-pass');
  });
});

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['10m', 600_000],
    ['1h', 3_600_000],
    ['2', 2000],
    ['1.5s', 1500],
  ])('%s = %i ms', (v, ms) => expect(parseDuration('timeout', v)).toBe(ms));
  it.each(['0', '-1s', '1d', '', '25h'])('%j is refused', (v) => expect(() => parseDuration('timeout', v)).toThrow(UsageError));
});
