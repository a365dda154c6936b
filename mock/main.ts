// Entry point: `node mock/main.ts`. Tunables come from the environment, validated here.
import { z } from 'zod';
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

if (!env.success) {
  console.error(JSON.stringify({ msg: 'invalid_environment', issues: z.treeifyError(env.error) }));
  process.exit(1);
}
const config = env.data;

const mock = createMockServer({
  modelName: config.MODEL_NAME,
  slots: config.SLOTS,
  queueLimit: config.QUEUE_LIMIT,
  tokenDelayMs: config.TOKEN_DELAY_MS,
  warmupMs: config.WARMUP_MS,
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  defaultMetrics: true,
});

const { url } = await mock.listen(config.PORT, config.HOST);
console.log(JSON.stringify({ time: new Date().toISOString(), msg: 'listening', url, ...config }));

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1); // second signal: stop now
    stopping = true;
    console.log(JSON.stringify({ time: new Date().toISOString(), msg: 'signal', signal }));
    mock.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(JSON.stringify({ msg: 'shutdown_failed', error: String(error) }));
        process.exit(1);
      },
    );
  });
}
