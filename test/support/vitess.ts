// The sharded Vitess ledger of the `vitess` project: ONE per run (vtcombo's keyspaces are fixed
// at start, so a keyspace per suite is not on offer), migrated once by the global setup.
// Suites keep apart by unique tenant names (`tenant()`); the global keyspace (controller_epoch,
// scheduled_run, the outbox sequence) is shared, so a suite must not assume it owns those rows.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createDb, type Db, type SqlArg } from '../../ledger/db.ts';
import { str } from '../../ledger/columns.ts';
import { classifyPlan, parsePlan, type Classification } from '../../scripts/testenv/vexplain.ts';
import type { VitessStackInfo } from '../../scripts/testenv/stack.ts';

export interface VitessLedger {
  stack: VitessStackInfo;
  /** @planetscale/database → ps-http-sim → vtgate (transaction mode SINGLE), default keyspace `ledger`. */
  db: Db;
  url: string;
  /** A tenant name no other suite of this run uses. */
  tenant(prefix?: string): string;
  /** vtgate's plan for one statement (with its arguments), classified; or the error vtgate planned it with. */
  plan(sql: string, args?: readonly SqlArg[]): Promise<PlannedStatement>;
}

/** vtgate's plan, classified; `shard-targeted`: a statement on a shard-targeted session (not routed by vtgate). */
export type PlannedStatement = ({ ok: true } & (Classification | { reach: 'shard-targeted'; keyspaces: string[]; routes: string[] }) & { plan: unknown }) | { ok: false; error: string };

export function vitessLedger(): VitessLedger {
  const stack = inject('ledgerStack');
  const db = createDb({ url: stack.vitess.databaseUrl });
  const run = randomBytes(3).toString('hex');
  let n = 0;
  return {
    stack,
    db,
    url: stack.vitess.databaseUrl,
    tenant: (prefix = 't') => `${prefix}-${run}-${++n}`,
    async plan(sql, args) {
      try {
        const r = await db.execute(`VEXPLAIN PLAN ${sql}`, args);
        const cell = Object.values(r.rows[0] ?? {})[0];
        const plan = parsePlan(str(cell));
        return { ok: true, ...classifyPlan(plan), plan };
      } catch (err) {
        return { ok: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
  };
}
