// The failure knobs (MOCK_*), read from the environment. Each is off by default, so an unset
// environment is the ordinary mock; a bad value fails the start with the variable's name
// rather than running an experiment that tests nothing.
import { z } from 'zod';
import { MIB } from './allocate.ts';
import { DEFAULT_TERMINATION_MESSAGE_PATH, TERMINATION_MESSAGE_MAX_BYTES, type PlannedExit } from './planned-exit.ts';

export type FailureKnobs = {
  /** /readyz answers 503 for the life of the process. */
  neverReady: boolean;
  /** Resident bytes to take at start (0: none). */
  allocateBytes: number;
  /** Exit on a timer, with a code and a termination message. */
  plannedExit: PlannedExit | undefined;
  /** After SIGTERM: unready but serving, this long, before the drain. */
  shutdownDelayMs: number;
};

/** Just under setTimeout's limit (2^31 - 1 ms, ~24.8 days). */
const MAX_SECONDS = 2_000_000;
/** 1 TiB: a typo, not an experiment. */
const MAX_MIB = 1024 * 1024;

// An env entry without a value (`env: [{ name: X }]` in a pod spec) arrives as '': unset.
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
const seconds = optional(z.coerce.number().min(0).max(MAX_SECONDS));
// Not z.stringbool(): when that fails, zod skips the cross-variable check below.
const BOOLEAN = { true: true, '1': true, yes: true, false: false, '0': false, no: false } as const;
const booleanWord = z.enum(Object.keys(BOOLEAN) as (keyof typeof BOOLEAN)[], { error: 'expected true or false (also 1/0, yes/no)' });
const boolean = optional(z.preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), booleanWord));

const shape = {
  MOCK_NEVER_READY: boolean,
  MOCK_ALLOCATE_MIB: optional(z.coerce.number().int().min(0).max(MAX_MIB)),
  MOCK_EXIT_AFTER_S: seconds,
  MOCK_EXIT_CODE: optional(z.coerce.number().int().min(0).max(255)),
  MOCK_EXIT_MESSAGE: optional(
    z.string().refine((s) => Buffer.byteLength(s) <= TERMINATION_MESSAGE_MAX_BYTES, {
      error: `at most ${TERMINATION_MESSAGE_MAX_BYTES} bytes: the kubelet reads no more of a termination message`,
    }),
  ),
  MOCK_TERMINATION_MESSAGE_PATH: optional(z.string()),
  MOCK_SHUTDOWN_DELAY_S: seconds,
};

const NEEDS_EXIT_AFTER = ['MOCK_EXIT_CODE', 'MOCK_EXIT_MESSAGE'] as const;

export const failureKnobsEnv = z
  .object(shape)
  .superRefine(
    (env, ctx) => {
      if (env.MOCK_EXIT_AFTER_S !== undefined) return;
      for (const name of NEEDS_EXIT_AFTER) {
        if (env[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'has no effect without MOCK_EXIT_AFTER_S' });
      }
    },
    // Also when another variable is bad, so one start reports every problem. Only presence is
    // read here, which a bad value does not change.
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  )
  .transform(
    (env): FailureKnobs => ({
      neverReady: env.MOCK_NEVER_READY === undefined ? false : BOOLEAN[env.MOCK_NEVER_READY],
      allocateBytes: (env.MOCK_ALLOCATE_MIB ?? 0) * MIB,
      plannedExit: env.MOCK_EXIT_AFTER_S === undefined ? undefined : plannedExit(env.MOCK_EXIT_AFTER_S, env),
      shutdownDelayMs: Math.round((env.MOCK_SHUTDOWN_DELAY_S ?? 0) * 1000),
    }),
  );

function plannedExit(afterS: number, env: { MOCK_EXIT_CODE?: number; MOCK_EXIT_MESSAGE?: string; MOCK_TERMINATION_MESSAGE_PATH?: string }): PlannedExit {
  const code = env.MOCK_EXIT_CODE ?? 1;
  return {
    afterMs: Math.round(afterS * 1000),
    code,
    message: env.MOCK_EXIT_MESSAGE ?? `mock-model: planned exit with code ${code} after ${afterS} s (MOCK_EXIT_AFTER_S)`,
    messagePath: env.MOCK_TERMINATION_MESSAGE_PATH ?? DEFAULT_TERMINATION_MESSAGE_PATH,
  };
}
