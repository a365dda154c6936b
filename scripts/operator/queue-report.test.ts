// `npm run tenant -- queue`: each tenant's head and why it waits, as the dequeue would decide it;
// `queue-bypass <tenant> <K>`: its arguments.
import { describe, expect, it } from 'vitest';
import type { Db } from '../../ledger/db.ts';
import type { QueuedItem } from '../../ledger/queue-pick.ts';
import type { Amounts } from '../../schema/model-service.ts';
import { parseSettingArgs, UsageError } from '../tenant.ts';
import { amountsLedger, globalQueue, shortText, tenantQueueLines, type TenantQueue } from './queue-report.ts';

const now = new Date('2026-12-01T10:00:00.000Z');
const amounts = (cpu: number, memory = 0, gpu = 0): Amounts => ({ cpu, memory, 'nvidia.com/gpu': gpu, modelservices: 1 });
const item = (id: string, seq: number, a: Amounts, over: Partial<QueuedItem> = {}): QueuedItem => ({ id, seq, amounts: a, bypassed: 0, expiresAt: null, ...over });
const tenantQueue = (items: QueuedItem[], cpuUsed: number, maxBypass = 3, rooms: TenantQueue['rooms'] = null): TenantQueue => ({
  shard: 'ledger/-80',
  tenant: 'acme',
  queued: items.length,
  maxBypass,
  weight: 1,
  rooms,
  items,
  quota: { cpu: { hard: 4000, used: cpuUsed }, memory: { hard: 8192, used: 0 }, modelservices: { hard: 20, used: 2 } },
});

describe('tenantQueueLines', () => {
  it('the head that does not fit, with a budget left and no later one that fits', () => {
    expect(tenantQueueLines(tenantQueue([item('H', 1, amounts(2000, 1024)), item('B', 2, amounts(3000))], 3000), now)).toEqual([
      'ledger/-80\tacme\tqueued=2\tmax-bypass=3\tweight=1',
      '  head H waits: cpu short by 1000 millicores (no later one fits either (bypassed 0/3))',
    ]);
  });

  it('held: the bypass budget is spent, so freed quota is kept for the head', () => {
    const lines = tenantQueueLines(tenantQueue([item('H', 1, amounts(2000), { bypassed: 3 }), item('S', 2, amounts(500))], 3000), now);
    expect(lines[1]).toBe('  head H waits: cpu short by 1000 millicores (held: bypass budget spent (3/3); freed quota is kept for it)');
  });

  it('a later, smaller one that fits passes the head at the next dequeue', () => {
    expect(tenantQueueLines(tenantQueue([item('H', 1, amounts(2000), { bypassed: 1 }), item('S', 2, amounts(500, 256))], 3000), now).slice(1)).toEqual([
      '  head H waits: cpu short by 1000 millicores (bypassed 1/3)',
      '  S fits now (cpu=500 memory=256) and passes it at the next dequeue',
    ]);
  });

  it('a head that fits now; ones past their TTL are named; none that ever fits; an unsharded database', () => {
    const expired = item('E', 1, amounts(500), { expiresAt: new Date(now.getTime() - 1) });
    expect(tenantQueueLines(tenantQueue([expired, item('H', 2, amounts(1000))], 0), now).slice(1)).toEqual([
      '  1 past their TTL, expired at the next dequeue: E',
      '  head H fits now (cpu=1000): admitted at the next dequeue',
    ]);
    const huge = { ...tenantQueue([item('X', 1, amounts(9000))], 0), shard: '' };
    expect(tenantQueueLines(huge, now)).toEqual([
      '(unsharded)\tacme\tqueued=1\tmax-bypass=3\tweight=1',
      '  no queued admission fits the hard limits: each waits for its TTL, a cancel or a raised limit (npm run tenant -- set acme …)',
    ]);
    expect(tenantQueueLines(tenantQueue([expired], 0), now)[2]).toBe('  nothing left to admit');
  });

  it('with clusters: a head that fits its quota but no room says which cluster lacks what, and whether the room is held for it', () => {
    const room = (cluster: string, mode: 'open' | 'draining', cpuFree: number) => ({
      cluster,
      mode,
      allotted: { cpu: 4000, memory: 8192, 'nvidia.com/gpu': 0, modelservices: 4 },
      reserved: { cpu: 4000 - cpuFree, memory: 0, 'nvidia.com/gpu': 0, modelservices: 1 },
      stranded: { cpu: 0, memory: 0, 'nvidia.com/gpu': 0, modelservices: 0 },
    });
    const rooms = [room('c1', 'open', 1000), room('c2', 'draining', 4000)];
    expect(tenantQueueLines(tenantQueue([item('H', 1, amounts(3000), { bypassed: 1 })], 0, 3, rooms), now).slice(1)).toEqual([
      '  H fits the quota (cpu=3000) but no cluster has room: c1: cpu short by 2000 millicores; c2: draining',
      "    freed room goes to the shard's lowest weighted share first; other tenants may pass it (bypassed 1/3)",
    ]);
    expect(tenantQueueLines(tenantQueue([item('H', 1, amounts(3000), { bypassed: 3 })], 0, 3, rooms), now)[2]).toMatch(/held: bypass budget spent \(3\/3\)/);
    // A room that takes it: admitted at the next dequeue, as without clusters.
    expect(tenantQueueLines(tenantQueue([item('H', 1, amounts(1000))], 0, 3, rooms), now)[1]).toBe('  head H fits now (cpu=1000): admitted at the next dequeue');
  });

  it('K = 0 is strict FIFO: nothing passes', () => {
    expect(tenantQueueLines(tenantQueue([item('H', 1, amounts(2000)), item('S', 2, amounts(500))], 3000, 0), now)[1]).toMatch(/^ {2}head H waits: .*held: bypass budget spent \(0\/0\)/);
  });

  it('shortfalls and amounts in ledger units', () => {
    expect(shortText([
      { resource: 'cpu', requested: 2000, available: 1000, short: 1000 },
      { resource: 'memory', requested: 1024, available: 512, short: 512 },
      { resource: 'nvidia.com/gpu', requested: 1, available: 0, short: 1 },
    ])).toBe('cpu short by 1000 millicores, memory short by 512 MiB, nvidia.com/gpu short by 1');
    expect(amountsLedger(amounts(0))).toBe('-');
  });
});

describe('queue-bypass and weight arguments', () => {
  it('queue-bypass: a tenant and a whole number from 0 to 1000', () => {
    expect(parseSettingArgs('queue-bypass', ['acme', '5'])).toEqual({ tenant: 'acme', value: 5 });
    expect(parseSettingArgs('queue-bypass', ['acme', '0'])).toEqual({ tenant: 'acme', value: 0 });
    for (const bad of [[], ['acme'], ['acme', '-1'], ['acme', '1001'], ['acme', 'x'], ['Acme!', '2'], ['acme', '2', 'more']]) {
      expect(() => parseSettingArgs('queue-bypass', bad)).toThrow(UsageError);
    }
  });

  it('weight: a tenant and a whole number from 1 to 1000 (0 would take it out of the pick)', () => {
    expect(parseSettingArgs('weight', ['acme', '2'])).toEqual({ tenant: 'acme', value: 2 });
    expect(parseSettingArgs('weight', ['acme', '1000'])).toEqual({ tenant: 'acme', value: 1000 });
    for (const bad of [['acme', '0'], ['acme', '1001'], ['acme', '1.5'], ['acme']]) expect(() => parseSettingArgs('weight', bad)).toThrow(UsageError);
    expect(() => parseSettingArgs('weight', ['acme', '0'])).toThrow(/weight must be a whole number from 1 to 1000/);
  });
});

/** A Db that answers the report's reads from `tenants` (per shard) and records every statement with its target. */
function fakeDb(byShard: Record<string, string[]>) {
  const log: Array<{ target: string; sql: string; args: readonly unknown[] }> = [];
  const make = (target: string): Db => ({
    async execute(sql, args = []) {
      log.push({ target, sql, args });
      if (sql === 'SHOW VITESS_SHARDS') return { rows: Object.keys(byShard).map((s) => ({ Shards: s })), rowsAffected: 0 };
      if (sql.includes('SELECT DISTINCT tenant')) {
        const [after, limit] = args as [string, number];
        const rows = (byShard[target.replace(':', '/')] ?? []).filter((t) => t > after).slice(0, limit);
        return { rows: rows.map((tenant) => ({ tenant })), rowsAffected: 0 };
      }
      if (sql.includes('FROM tenant_quota') && sql.includes('MIN(queue_max_bypass)')) return { rows: [{ k: 2, w: 1 }], rowsAffected: 0 };
      if (sql === 'SELECT name FROM cluster LIMIT 1') return { rows: [], rowsAffected: 0 }; // no cluster registered
      if (sql.includes('FROM tenant_quota')) return { rows: [{ resource: 'cpu', hard: 1000, used: 1000, queued: 1 }, { resource: 'modelservices', hard: 20, used: 1, queued: 1 }], rowsAffected: 0 };
      if (sql.includes("state = 'queued'")) {
        return { rows: [{ id: `Q-${String(args[0])}`, queue_seq: 1, cpu_millis: 500, memory_mib: 0, gpu: 0, modelservices: 1, queue_bypassed: 0, queue_expires_at: null, created_at: '2026-12-01 09:59:00.000' }], rowsAffected: 0 };
      }
      throw new Error(`unexpected statement: ${sql}`);
    },
    transaction: () => Promise.reject(new Error('the report locks nothing')),
    withSignal: () => make(target),
    onShard: (t) => make(t),
  });
  return { db: make(''), log };
}

describe('globalQueue', () => {
  it('scans each shard for its tenants, a page at a time; every other statement names the tenant', async () => {
    const { db, log } = fakeDb({ 'ledger/-80': ['a1', 'a2', 'a3'], 'ledger/80-': ['z1'] });
    const seen: Array<[string, string, string]> = [];
    for await (const q of globalQueue(db, 2)) seen.push([q.shard, q.tenant, tenantQueueLines(q, now)[1]!]);
    expect(seen).toEqual([
      ['ledger/-80', 'a1', '  head Q-a1 waits: cpu short by 500 millicores (no later one fits either (bypassed 0/2))'],
      ['ledger/-80', 'a2', '  head Q-a2 waits: cpu short by 500 millicores (no later one fits either (bypassed 0/2))'],
      ['ledger/-80', 'a3', '  head Q-a3 waits: cpu short by 500 millicores (no later one fits either (bypassed 0/2))'],
      ['ledger/80-', 'z1', '  head Q-z1 waits: cpu short by 500 millicores (no later one fits either (bypassed 0/2))'],
    ]);
    const scans = log.filter((l) => l.sql.includes('SELECT DISTINCT tenant'));
    expect(scans.map((l) => [l.target, l.args[0]])).toEqual([
      ['ledger:-80', ''],
      ['ledger:-80', 'a2'],
      ['ledger:80-', ''],
    ]);
    // Besides the shard list and "is any cluster registered" (global), every statement names the tenant.
    for (const l of log.filter((x) => !['SHOW VITESS_SHARDS', 'SELECT name FROM cluster LIMIT 1'].includes(x.sql) && !x.sql.includes('SELECT DISTINCT tenant'))) {
      expect(l.target).toBe('');
      expect(l.sql).toMatch(/\btenant = \?/);
      expect(l.sql).not.toMatch(/FOR UPDATE/);
    }
  });
});
