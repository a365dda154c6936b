import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { MIB } from './allocate.ts';
import { failureKnobsEnv, type FailureKnobs } from './failure-knobs.ts';

const OFF: FailureKnobs = { neverReady: false, allocateBytes: 0, plannedExit: undefined, shutdownDelayMs: 0 };

const parse = (env: Record<string, string>) => failureKnobsEnv.parse(env);

/** The variables a failed parse names, with their messages. */
function problems(env: Record<string, string>): Record<string, string[]> {
  const result = failureKnobsEnv.safeParse(env);
  if (result.success) throw new Error(`expected ${JSON.stringify(env)} to be refused`);
  const tree = z.treeifyError(result.error) as { properties?: Record<string, { errors: string[] }> };
  return Object.fromEntries(Object.entries(tree.properties ?? {}).map(([name, node]) => [name, node.errors]));
}

describe('failureKnobsEnv: defaults are the ordinary mock', () => {
  test('no variables: every knob off', () => {
    expect(parse({})).toEqual(OFF);
  });

  test('unrelated variables are ignored', () => {
    expect(parse({ PORT: '9000', PATH: '/usr/bin', MOCK_OTHER: 'x' })).toEqual(OFF);
  });

  test("an empty value (a pod's env entry without a value) counts as unset", () => {
    const empty = ['MOCK_NEVER_READY', 'MOCK_ALLOCATE_MIB', 'MOCK_EXIT_AFTER_S', 'MOCK_EXIT_CODE', 'MOCK_EXIT_MESSAGE', 'MOCK_SHUTDOWN_DELAY_S'];
    expect(parse(Object.fromEntries(empty.map((name) => [name, ''])))).toEqual(OFF);
  });
});

describe('failureKnobsEnv: each knob', () => {
  test.each([
    ['true', true],
    ['1', true],
    ['TRUE', true],
    ['yes', true],
    ['No', false],
    ['false', false],
    ['0', false],
  ])('MOCK_NEVER_READY=%s → neverReady %s', (value, neverReady) => {
    expect(parse({ MOCK_NEVER_READY: value })).toEqual({ ...OFF, neverReady });
  });

  test('MOCK_ALLOCATE_MIB is MiB', () => {
    expect(parse({ MOCK_ALLOCATE_MIB: '200' })).toEqual({ ...OFF, allocateBytes: 200 * MIB });
  });

  test('MOCK_EXIT_AFTER_S alone: code 1, a message naming the knob, /dev/termination-log', () => {
    expect(parse({ MOCK_EXIT_AFTER_S: '30' }).plannedExit).toEqual({
      afterMs: 30_000,
      code: 1,
      message: 'mock-model: planned exit with code 1 after 30 s (MOCK_EXIT_AFTER_S)',
      messagePath: '/dev/termination-log',
    });
  });

  test('MOCK_EXIT_* all set, fractional seconds', () => {
    const env = { MOCK_EXIT_AFTER_S: '1.5', MOCK_EXIT_CODE: '0', MOCK_EXIT_MESSAGE: 'bye', MOCK_TERMINATION_MESSAGE_PATH: '/tmp/t' };
    expect(parse(env).plannedExit).toEqual({ afterMs: 1500, code: 0, message: 'bye', messagePath: '/tmp/t' });
  });

  test('MOCK_EXIT_AFTER_S=0 exits at once (a crash loop)', () => {
    expect(parse({ MOCK_EXIT_AFTER_S: '0' }).plannedExit?.afterMs).toBe(0);
  });

  test('MOCK_TERMINATION_MESSAGE_PATH alone is allowed and changes nothing', () => {
    expect(parse({ MOCK_TERMINATION_MESSAGE_PATH: '/tmp/t' })).toEqual(OFF);
  });

  test('MOCK_SHUTDOWN_DELAY_S is seconds', () => {
    expect(parse({ MOCK_SHUTDOWN_DELAY_S: '45' })).toEqual({ ...OFF, shutdownDelayMs: 45_000 });
    expect(parse({ MOCK_SHUTDOWN_DELAY_S: '0.25' })).toEqual({ ...OFF, shutdownDelayMs: 250 });
  });

  test('a 4096-byte message is accepted', () => {
    expect(parse({ MOCK_EXIT_AFTER_S: '1', MOCK_EXIT_MESSAGE: 'é'.repeat(2048) }).plannedExit?.message).toHaveLength(2048);
  });
});

describe('failureKnobsEnv: bad values name their variable', () => {
  test('every problem at once, the cross-variable one too', () => {
    expect(problems({ MOCK_NEVER_READY: 'maybe', MOCK_ALLOCATE_MIB: 'lots', MOCK_EXIT_CODE: '300' })).toEqual({
      MOCK_NEVER_READY: ['expected true or false (also 1/0, yes/no)'],
      MOCK_ALLOCATE_MIB: ['Invalid input: expected number, received NaN'],
      MOCK_EXIT_CODE: ['Too big: expected number to be <=255', 'has no effect without MOCK_EXIT_AFTER_S'],
    });
  });

  test.each<[string, Record<string, string>, string, RegExp]>([
    ['not a boolean', { MOCK_NEVER_READY: 'maybe' }, 'MOCK_NEVER_READY', /expected true or false/],
    ['negative MiB', { MOCK_ALLOCATE_MIB: '-1' }, 'MOCK_ALLOCATE_MIB', />=0/],
    ['fractional MiB', { MOCK_ALLOCATE_MIB: '1.5' }, 'MOCK_ALLOCATE_MIB', /expected int/],
    ['MiB not a number', { MOCK_ALLOCATE_MIB: '200Mi' }, 'MOCK_ALLOCATE_MIB', /number/],
    ['more than 1 TiB', { MOCK_ALLOCATE_MIB: String(1024 * 1024 + 1) }, 'MOCK_ALLOCATE_MIB', /<=1048576/],
    ['negative delay', { MOCK_EXIT_AFTER_S: '-5' }, 'MOCK_EXIT_AFTER_S', />=0/],
    ['a duration with a unit', { MOCK_SHUTDOWN_DELAY_S: '30s' }, 'MOCK_SHUTDOWN_DELAY_S', /number/],
    ['beyond setTimeout', { MOCK_SHUTDOWN_DELAY_S: '3000000' }, 'MOCK_SHUTDOWN_DELAY_S', /<=2000000/],
    ['exit code 256', { MOCK_EXIT_AFTER_S: '1', MOCK_EXIT_CODE: '256' }, 'MOCK_EXIT_CODE', /<=255/],
    ['exit code -1', { MOCK_EXIT_AFTER_S: '1', MOCK_EXIT_CODE: '-1' }, 'MOCK_EXIT_CODE', />=0/],
    ['message over 4096 bytes', { MOCK_EXIT_AFTER_S: '1', MOCK_EXIT_MESSAGE: 'é'.repeat(2049) }, 'MOCK_EXIT_MESSAGE', /4096 bytes/],
    ['exit code without a time', { MOCK_EXIT_CODE: '2' }, 'MOCK_EXIT_CODE', /without MOCK_EXIT_AFTER_S/],
    ['message without a time', { MOCK_EXIT_MESSAGE: 'x' }, 'MOCK_EXIT_MESSAGE', /without MOCK_EXIT_AFTER_S/],
  ])('%s', (_, env, name, message) => {
    const found = problems(env);
    expect(Object.keys(found)).toEqual([name]);
    expect(found[name]?.join(' ')).toMatch(message);
  });
});
