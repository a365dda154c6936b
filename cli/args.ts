// Command-line parsing: argv + environment → one typed command, or a UsageError. Pure.
// Built on node:util parseArgs (strict: unknown options and missing values are errors).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MAX_QUEUE_TTL_SECONDS } from '../schema/admission.ts';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type Output = 'table' | 'json' | 'yaml';

export interface Connection {
  url: string;
  key: string;
  requestTimeoutMs: number;
}

export interface SpecFlags {
  file?: string;
  name?: string;
  image?: string;
  replicas?: number;
  cpu?: string;
  memory?: string;
  gpu?: string;
  port?: number;
  env: string[];
  args: string[];
  readinessPath?: string;
  /** --queue: wait for quota instead of a refusal ("onShortQuota": "queue"). */
  queue?: boolean;
  /** --queue-ttl: how long it may wait queued, in seconds ("queueTtlSeconds"). */
  queueTtlSeconds?: number;
  /** --autoscale MIN:MAX:TARGET: scale on the pods' load ("autoscale"). */
  autoscale?: AutoscaleFlag;
}

/** `--autoscale MIN:MAX:TARGET`: the range and the load one replica should carry (requests waiting + being generated). */
export interface AutoscaleFlag {
  minReplicas: number;
  maxReplicas: number;
  targetQueuePerReplica: number;
}

export interface WaitFlags {
  wait: boolean;
  timeoutMs: number;
  intervalMs: number;
}

export type Command =
  | { kind: 'help'; topic?: string; /** No command given: the help goes to stderr, exit 2. */ missing?: boolean }
  | { kind: 'version' }
  | { kind: 'submit'; conn: Connection; output: Output; spec: SpecFlags; idempotencyKey?: string; wait: WaitFlags }
  | { kind: 'get'; conn: Connection; output: Output; id: string }
  | { kind: 'list'; conn: Connection; output: Output; limit: number; all: boolean }
  | { kind: 'quota'; conn: Connection; output: Output }
  | { kind: 'queue'; conn: Connection; output: Output }
  | {
      kind: 'scale';
      conn: Connection;
      output: Output;
      id: string;
      /** The new replicas; undefined: only the autoscaling changes. */
      replicas?: number;
      /** --autoscale: a new range and target, null for `off`; undefined: not given. */
      autoscale?: AutoscaleFlag | null;
      idempotencyKey?: string;
      wait: WaitFlags;
    }
  | { kind: 'delete'; conn: Connection; output: Output; id: string; wait: WaitFlags }
  | { kind: 'chat'; conn: Connection; id: string; /** From the arguments; undefined: read standard input. */ message?: string; model: string; system?: string; maxTokens?: number };

export const COMMANDS = ['submit', 'get', 'list', 'quota', 'queue', 'scale', 'delete', 'chat', 'help'] as const;

type Options = NonNullable<ParseArgsConfig['options']>;
const connOptions = {
  url: { type: 'string' },
  key: { type: 'string' },
  'request-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} satisfies Options;
const outputOption = { output: { type: 'string', short: 'o' } } satisfies Options;
const waitOptions = { wait: { type: 'boolean', short: 'w' }, timeout: { type: 'string' }, interval: { type: 'string' } } satisfies Options;
const specOptions = {
  file: { type: 'string', short: 'f' },
  name: { type: 'string' },
  image: { type: 'string' },
  replicas: { type: 'string' },
  cpu: { type: 'string' },
  memory: { type: 'string' },
  gpu: { type: 'string' },
  port: { type: 'string' },
  env: { type: 'string', multiple: true },
  arg: { type: 'string', multiple: true },
  'readiness-path': { type: 'string' },
  'idempotency-key': { type: 'string' },
  queue: { type: 'boolean' },
  'queue-ttl': { type: 'string' },
  autoscale: { type: 'string' },
} satisfies Options;

export const DEFAULTS = {
  requestTimeoutMs: 15_000,
  waitTimeoutMs: 10 * 60_000,
  intervalMs: 1_000,
  listLimit: 20,
  /**
   * chat's `model` when neither --model nor MODELDOCK_MODEL names one. The edge passes the body to
   * the tenant's own server unchanged, and only that server knows what it serves: the CLI cannot
   * look it up, so it sends a name an OpenAI-compatible server may take as "whatever you serve".
   */
  chatModel: 'default',
} as const;

/** "500ms", "30s", "10m", "1h" or plain seconds → milliseconds. */
export function parseDuration(flag: string, v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw new UsageError(`--${flag} must be a duration such as 500ms, 30s, 10m or 1h (got "${v}")`);
  const n = Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  if (n <= 0 || n > 24 * 3_600_000) throw new UsageError(`--${flag} must be more than 0 and at most 24h (got "${v}")`);
  return Math.round(n);
}

function parseInteger(flag: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max} (got "${v}")`);
  return Number(v);
}

/** The most `--autoscale` TARGET may be (schema/autoscale.ts targetQueuePerReplica). */
const MAX_TARGET = 10_000;

/** `MIN:MAX:TARGET` (e.g. 1:8:10) → the autoscaling flag; `off` → null where it may be turned off (scale). */
export function parseAutoscale(v: string, offAllowed: boolean): AutoscaleFlag | null {
  if (v === 'off') {
    if (offAllowed) return null;
    throw new UsageError('--autoscale off only applies to scale (a new admission without --autoscale does not autoscale)');
  }
  const m = /^(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(v);
  if (!m) throw new UsageError(`--autoscale must be MIN:MAX:TARGET, e.g. 1:8:10 (replicas 1 to 8, 10 requests waiting or running per replica)${offAllowed ? ', or off' : ''} (got "${v}")`);
  const [minReplicas, maxReplicas, targetQueuePerReplica] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (minReplicas < 1 || maxReplicas > 1000) throw new UsageError(`--autoscale: MIN and MAX must be from 1 to 1000 (got "${v}")`);
  if (minReplicas > maxReplicas) throw new UsageError(`--autoscale: MIN must not be more than MAX (got "${v}")`);
  if (targetQueuePerReplica <= 0 || targetQueuePerReplica > MAX_TARGET) throw new UsageError(`--autoscale: TARGET must be more than 0 and at most ${MAX_TARGET} (got "${v}")`);
  return { minReplicas, maxReplicas, targetQueuePerReplica };
}

function parseOutput(v: string | undefined): Output {
  if (v === undefined || v === 'table' || v === 'json' || v === 'yaml') return v ?? 'table';
  throw new UsageError(`-o/--output must be table, json or yaml (got "${v}")`);
}

function connection(values: { url?: string; key?: string; 'request-timeout'?: string }, env: Record<string, string | undefined>): Connection {
  const url = values.url ?? env.MODELDOCK_URL;
  const key = values.key ?? env.MODELDOCK_KEY;
  if (!url) throw new UsageError('no API URL: set MODELDOCK_URL or pass --url (e.g. http://127.0.0.1:8787)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`the API URL is not a URL: "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError('the API URL must start with http:// or https://');
  if (parsed.username || parsed.password) throw new UsageError('the API URL must not carry credentials; the key goes in MODELDOCK_KEY');
  if (!key) throw new UsageError('no API key: set MODELDOCK_KEY or pass --key');
  const rt = values['request-timeout'];
  return { url: parsed.origin + parsed.pathname.replace(/\/+$/, ''), key, requestTimeoutMs: rt ? parseDuration('request-timeout', rt) : DEFAULTS.requestTimeoutMs };
}

function waitFlags(values: { wait?: boolean; timeout?: string; interval?: string }): WaitFlags {
  if (!values.wait && (values.timeout || values.interval)) throw new UsageError('--timeout and --interval only apply with --wait');
  return {
    wait: values.wait ?? false,
    timeoutMs: values.timeout ? parseDuration('timeout', values.timeout) : DEFAULTS.waitTimeoutMs,
    intervalMs: values.interval ? parseDuration('interval', values.interval) : DEFAULTS.intervalMs,
  };
}

function one(positionals: string[], what: string, command: string): string {
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one ${what} (modeldock ${command} <${what}>)`);
  return positionals[0]!;
}

function none(positionals: string[], command: string): void {
  if (positionals.length) throw new UsageError(`${command} takes no arguments (got "${positionals.join(' ')}")`);
}

function parse<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    // parseArgs' messages name the option and say what is wrong; keep the first line.
    throw new UsageError((err as Error).message.split('\n')[0]!);
  }
}

/** argv (without node and the script) + environment → a command. Throws UsageError. */
export function parseCommand(argv: string[], env: Record<string, string | undefined>): Command {
  const [command, ...rest] = argv;
  if (command === undefined) return { kind: 'help', missing: true };
  if (command === 'help' || command === '--help' || command === '-h') return { kind: 'help', topic: rest[0] };
  if (command === '--version' || command === 'version') return { kind: 'version' };
  switch (command) {
    case 'submit': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption, ...waitOptions, ...specOptions });
      if (values.help) return { kind: 'help', topic: command };
      none(positionals, command);
      const spec: SpecFlags = {
        file: values.file,
        name: values.name,
        image: values.image,
        replicas: parseInteger('replicas', values.replicas, 0, 1000),
        cpu: values.cpu,
        memory: values.memory,
        gpu: values.gpu,
        port: parseInteger('port', values.port, 1, 65535),
        env: values.env ?? [],
        args: values.arg ?? [],
        readinessPath: values['readiness-path'],
        queue: values.queue ?? false,
        queueTtlSeconds: parseInteger('queue-ttl', values['queue-ttl'], 1, MAX_QUEUE_TTL_SECONDS),
        autoscale: values.autoscale === undefined ? undefined : (parseAutoscale(values.autoscale, false) ?? undefined),
      };
      // Without --queue the API refuses a TTL (it only applies to a queued admission): say so here.
      if (spec.queueTtlSeconds !== undefined && !spec.queue) throw new UsageError('--queue-ttl only applies with --queue');
      if (!spec.file && !spec.name && !spec.image) throw new UsageError('submit needs a spec: -f <file.yaml|json> and/or --name and --image');
      for (const e of spec.env) if (!/^[^=]+=/.test(e)) throw new UsageError(`--env must be NAME=value (got "${e}")`);
      return { kind: 'submit', conn: connection(values, env), output: parseOutput(values.output), spec, idempotencyKey: values['idempotency-key'], wait: waitFlags(values) };
    }
    case 'get': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption });
      if (values.help) return { kind: 'help', topic: command };
      const id = one(positionals, 'id', command);
      return { kind: 'get', conn: connection(values, env), output: parseOutput(values.output), id };
    }
    case 'list': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption, limit: { type: 'string' }, all: { type: 'boolean' } });
      if (values.help) return { kind: 'help', topic: command };
      none(positionals, command);
      if (values.all && values.limit) throw new UsageError('--all and --limit exclude each other');
      return { kind: 'list', conn: connection(values, env), output: parseOutput(values.output), limit: parseInteger('limit', values.limit, 1, 100) ?? DEFAULTS.listLimit, all: values.all ?? false };
    }
    case 'quota': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption });
      if (values.help) return { kind: 'help', topic: command };
      none(positionals, command);
      return { kind: 'quota', conn: connection(values, env), output: parseOutput(values.output) };
    }
    case 'queue': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption });
      if (values.help) return { kind: 'help', topic: command };
      none(positionals, command);
      return { kind: 'queue', conn: connection(values, env), output: parseOutput(values.output) };
    }
    case 'scale': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption, ...waitOptions, 'idempotency-key': { type: 'string' }, autoscale: { type: 'string' } });
      if (values.help) return { kind: 'help', topic: command };
      const autoscale = values.autoscale === undefined ? undefined : parseAutoscale(values.autoscale, true);
      // With --autoscale the replicas are optional (the API moves them into the new range).
      if (positionals.length !== 2 && !(autoscale !== undefined && positionals.length === 1)) {
        throw new UsageError('scale takes an id and a number of replicas (modeldock scale <id> <replicas>), or an id and --autoscale MIN:MAX:TARGET|off');
      }
      const replicas = parseInteger('replicas', positionals[1], 0, 1000);
      if (replicas !== undefined && autoscale && (replicas < autoscale.minReplicas || replicas > autoscale.maxReplicas)) {
        throw new UsageError(`replicas ${replicas} is outside --autoscale ${autoscale.minReplicas}..${autoscale.maxReplicas}`);
      }
      return {
        kind: 'scale',
        conn: connection(values, env),
        output: parseOutput(values.output),
        id: positionals[0]!,
        replicas,
        autoscale,
        idempotencyKey: values['idempotency-key'],
        wait: waitFlags(values),
      };
    }
    case 'delete': {
      const { values, positionals } = parse(rest, { ...connOptions, ...outputOption, ...waitOptions });
      if (values.help) return { kind: 'help', topic: command };
      const id = one(positionals, 'id', command);
      return { kind: 'delete', conn: connection(values, env), output: parseOutput(values.output), id, wait: waitFlags(values) };
    }
    case 'chat': {
      const { values, positionals } = parse(rest, { ...connOptions, model: { type: 'string' }, system: { type: 'string' }, 'max-tokens': { type: 'string' } });
      if (values.help) return { kind: 'help', topic: command };
      const [id, ...words] = positionals;
      if (id === undefined) throw new UsageError('chat takes an id, then the message (modeldock chat <id> [message…]; without one it reads standard input)');
      const model = values.model ?? (env.MODELDOCK_MODEL || DEFAULTS.chatModel);
      if (model === '') throw new UsageError('--model must not be empty');
      return {
        kind: 'chat',
        conn: connection(values, env),
        id,
        message: words.length ? words.join(' ') : undefined,
        model,
        system: values.system,
        maxTokens: parseInteger('max-tokens', values['max-tokens'], 1, 1_000_000),
      };
    }
    default:
      throw new UsageError(`unknown command "${command}"; commands: ${COMMANDS.join(', ')} (modeldock help)`);
  }
}
