// Entry point: `node mock/main.ts`. Tunables come from the environment, validated here; the
// failure knobs (MOCK_*, off by default) are validated in failure-knobs.ts.
import { z } from 'zod';
import { allocateResident, MIB } from './allocate.ts';
import { failureKnobsEnv } from './failure-knobs.ts';
import { schedulePlannedExit } from './planned-exit.ts';
import { createMockServer, mockServerDefaults as d } from './server.ts';

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

const env = z
  .object({
    PORT: int(8000).pipe(z.number().max(65535)),
    HOST: z.string().min(1).default('127.0.0.1'),
    MODEL_NAME: z.string().min(1).default(d.modelName),
    SLOTS: int(d.slots, 1),
    QUEUE_LIMIT: int(d.queueLimit),
    TOKEN_DELAY_MS: int(d.tokenDelayMs),
    WARMUP_MS: int(d.warmupMs),
    SHUTDOWN_GRACE_MS: int(d.shutdownGraceMs),
  })
  .safeParse(process.env);
const knobs = failureKnobsEnv.safeParse(process.env);

if (!env.success || !knobs.success) {
  const issues = [env, knobs].flatMap((result) => result.error?.issues ?? []);
  console.error(JSON.stringify({ msg: 'invalid_environment', issues: z.treeifyError(new z.ZodError(issues)) }));
  process.exit(1);
}
const config = env.data;
const failure = knobs.data;
const log = (entry: Record<string, unknown>) => console.log(JSON.stringify({ time: new Date().toISOString(), ...entry }));

// The timer runs from the start of the process, whatever happens after it.
if (failure.plannedExit) schedulePlannedExit(failure.plannedExit);

const mock = createMockServer({
  modelName: config.MODEL_NAME,
  slots: config.SLOTS,
  queueLimit: config.QUEUE_LIMIT,
  tokenDelayMs: config.TOKEN_DELAY_MS,
  warmupMs: config.WARMUP_MS,
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  neverReady: failure.neverReady,
  shutdownDelayMs: failure.shutdownDelayMs,
  defaultMetrics: true,
});

// Before the allocation, so a SIGTERM during it takes the same way out.
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1); // second signal: stop now
    stopping = true;
    log({ msg: 'signal', signal });
    mock.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(JSON.stringify({ msg: 'shutdown_failed', error: String(error) }));
        process.exit(1);
      },
    );
  });
}

if (failure.allocateBytes > 0) {
  log({ msg: 'allocating', mib: failure.allocateBytes / MIB });
  await allocateResident(failure.allocateBytes);
  log({ msg: 'allocated', mib: failure.allocateBytes / MIB, rssMib: Math.round(process.memoryUsage.rss() / MIB) });
}

const { url } = await mock.listen(config.PORT, config.HOST);
log({ msg: 'listening', url, ...config, ...failure });

