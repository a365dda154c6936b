// A recording wrapper around the Db / Queryable seam (ledger/db.ts): every statement
// the code issues is kept with its arguments, the transaction it ran in, the repository
// function that issued it (from the call stack) and the entry point the test named. Used by
// the Vitess statement check (test/vitess/statements.test.ts) to plan each one on vtgate.
import { AsyncLocalStorage } from 'node:async_hooks';
import { relative } from 'node:path';
import type { Db, Queryable, SqlArg } from '../../ledger/db.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export interface RecordedStatement {
  sql: string;
  args: readonly SqlArg[];
  /** Transaction number (per log), or null for a statement on its own session. */
  tx: number | null;
  /** The shard the session was targeted at (`ledger:-80`, Db.onShard), or null when vtgate routes it. */
  target: string | null;
  /** `path/to/module.ts:function` of the innermost repository frame that issued it. */
  site: string;
  /** What the test was calling (e.g. `services/admit:admit`), for statements of anonymous callbacks. */
  entry: string;
  /** The error the statement ended with (it is recorded before it runs). */
  error?: string;
}

export class StatementLog {
  readonly statements: RecordedStatement[] = [];
  #txSeq = 0;
  readonly #entry = new AsyncLocalStorage<string>();

  /** Runs `fn` with every statement it issues attributed to `entry`. */
  as<T>(entry: string, fn: () => Promise<T>): Promise<T> {
    return this.#entry.run(entry, fn);
  }

  /** A Db that records, then delegates to `inner`. */
  wrap(inner: Db, target: string | null = null): Db {
    return {
      execute: (sql, args) => this.#run(inner, sql, args, null, target),
      transaction: (fn) => {
        const tx = ++this.#txSeq;
        return inner.transaction((q) => fn({ execute: (sql, args) => this.#run(q, sql, args, tx, target) }));
      },
      withSignal: (signal) => this.wrap(inner.withSignal(signal), target),
      onShard: (shard) => this.wrap(inner.onShard(shard), shard),
    };
  }

  async #run(q: Queryable, sql: string, args: readonly SqlArg[] | undefined, tx: number | null, target: string | null) {
    const entry = this.#entry.getStore() ?? '(unnamed)';
    const rec: RecordedStatement = { sql, args: args ?? [], tx, target, site: nameCallback(callSite(), entry), entry };
    this.statements.push(rec);
    try {
      return await q.execute(sql, args);
    } catch (err) {
      rec.error = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }
}

const THIS_FILE = 'test/support/recording-db.ts';
const SEAM = 'ledger/db.ts';
const FRAME = /^\s*at (?:async )?(?:(.+?) \()?(?:file:\/\/)?([^()\s]+?):(\d+):\d+\)?$/;

/** `module.ts:function` of the innermost frame in the repository's own code (not this file, the seam, or tests). */
export function callSite(stack = captureStack()): string {
  const frames = stack
    .split('\n')
    .map((line) => FRAME.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && (m[2] ?? '').startsWith('/')) // files, not node: internals
    .map((m) => ({ fn: m[1] ?? '', file: relative(repoRoot, m[2] ?? ''), line: Number(m[3]) }))
    .filter((f) => !f.file.startsWith('..') && !f.file.startsWith('node_modules') && f.file !== THIS_FILE && f.file !== SEAM && !f.file.startsWith('test/'));
  const first = frames[0];
  if (!first) return '(unknown)';
  // An anonymous callback (e.g. a transaction body): name it after the next named frame of its module.
  const named = frames.find((f) => f.file === first.file && f.fn !== '' && !f.fn.startsWith('Object.'));
  const fn = (first.fn && !first.fn.startsWith('Object.') ? first.fn : named?.fn) ?? `<callback@${first.line}>`;
  return `${first.file}:${fn.replace(/^async /, '')}`;
}

/** A transaction body has no name on the async stack: when the entry point is in the same module, it is that function. */
function nameCallback(site: string, entry: string): string {
  const m = /^(.+):<callback@\d+>$/.exec(site);
  const fn = m && entry.startsWith(`${m[1]}:`) ? entry.slice(m[1]!.length + 1).replace(/ \(.*\)$/, '') : undefined;
  return m && fn ? `${m[1]}:${fn}` : site;
}

function captureStack(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  try {
    return new Error().stack ?? '';
  } finally {
    Error.stackTraceLimit = limit;
  }
}
