// Structured JSON logs, one object per line: {time, level, msg, ...fields}. `child(fields)`
// binds fields such as controller, key and admissionId for everything logged below it.
export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level?: Level;
  write?: (line: string) => void;
  now?: () => Date;
}

export function createLogger(
  { level = 'info', write = (l) => process.stdout.write(l), now = () => new Date() }: LoggerOptions = {},
  bound: Record<string, unknown> = {},
): Logger {
  const emit = (lvl: Level) => (msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const record: Record<string, unknown> = { time: now().toISOString(), level: lvl, msg, ...bound };
    for (const [k, v] of Object.entries(fields)) record[k] = v instanceof Error ? v.message : v;
    write(`${JSON.stringify(record)}\n`);
  };
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => createLogger({ level, write, now }, { ...bound, ...fields }),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger({ write: () => undefined });
