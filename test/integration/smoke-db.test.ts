// Smoke test: the production driver @planetscale/database, through ps-http-sim, against a
// real MariaDB. Each assertion depends on a real server answering (a fake would not raise
// MySQL errno 1062 or report a MariaDB version).
import { connect, DatabaseError } from '@planetscale/database';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.conn.execute(
    `CREATE TABLE smoke (
       id BIGINT NOT NULL PRIMARY KEY,
       doc JSON NULL,
       label VARCHAR(64) NOT NULL DEFAULT '',
       flag TINYINT(1) NOT NULL DEFAULT 0,
       at DATETIME(3) NULL
     ) DEFAULT CHARSET=utf8mb4`,
  );
});
afterAll(async () => db?.drop());

describe('@planetscale/database → ps-http-sim → MariaDB', () => {
  it('talks HTTP to /psdb.v1alpha1.Database/Execute and reaches a real server', async () => {
    const paths: string[] = [];
    const conn = connect({
      url: db.url,
      fetch: (input, init) => {
        paths.push(new URL(String(input)).pathname);
        return fetch(input, init);
      },
    });
    const r = await conn.execute('SELECT VERSION() AS v, DATABASE() AS d');
    expect(paths).toEqual(['/psdb.v1alpha1.Database/Execute']);
    expect(r.rows[0]).toMatchObject({ d: db.name });
    expect(String((r.rows[0] as { v: string }).v)).toMatch(/MariaDB|^[58]\./);
  });

  it('transaction() commits every statement together', async () => {
    await db.conn.transaction(async (tx) => {
      await tx.execute('INSERT INTO smoke (id, label) VALUES (?, ?)', [1, 'a']);
      await tx.execute('INSERT INTO smoke (id, label) VALUES (?, ?)', [2, 'b']);
    });
    const r = await db.conn.execute('SELECT id FROM smoke WHERE id IN (1, 2) ORDER BY id');
    expect(r.rows).toEqual([{ id: '1' }, { id: '2' }]);
  });

  it('transaction() rolls back when the callback throws', async () => {
    await expect(
      db.conn.transaction(async (tx) => {
        await tx.execute('INSERT INTO smoke (id, label) VALUES (?, ?)', [3, 'c']);
        const seen = await tx.execute('SELECT COUNT(*) AS n FROM smoke WHERE id = 3');
        expect(seen.rows[0]).toEqual({ n: '1' }); // visible inside the transaction
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const r = await db.conn.execute('SELECT COUNT(*) AS n FROM smoke WHERE id = 3');
    expect(r.rows[0]).toEqual({ n: '0' });
  });

  it('surfaces a duplicate key as DatabaseError carrying MySQL errno 1062', async () => {
    await db.conn.execute('INSERT INTO smoke (id) VALUES (10)');
    const err = await db.conn.execute('INSERT INTO smoke (id) VALUES (10)').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseError);
    // ps-http-sim reports body.code "UNKNOWN"; the errno is in the message (as on PlanetScale).
    expect((err as DatabaseError).message).toMatch(/errno 1062/);
    expect((err as DatabaseError).message).toMatch(/sqlstate 23000/);
  });

  it('round-trips BIGINT beyond 2^53 as an exact string, JSON, TINYINT(1) and DATETIME(3)', async () => {
    const big = '9007199254740993'; // 2^53 + 1: a JS number would lose it
    const doc = { cpu: 1500, nested: { list: [1, 'two'] } };
    await db.conn.execute('INSERT INTO smoke (id, doc, flag, at) VALUES (?, ?, ?, ?)', [
      big,
      JSON.stringify(doc),
      true,
      new Date('2026-01-02T03:04:05.678Z'),
    ]);
    const r = await db.conn.execute('SELECT id, doc, flag, at FROM smoke WHERE id = ?', [big]);
    const row = r.rows[0] as Record<string, unknown>;
    expect(row.id).toBe(big); // INT64 → string
    expect(row.flag).toBe(1); // TINYINT(1) → number, not boolean
    expect(row.at).toBe('2026-01-02 03:04:05.678'); // DATETIME → string, UTC as sent
    // MariaDB's JSON is LONGTEXT: the driver returns a string here, an object on MySQL 8.
    const parsed: unknown = typeof row.doc === 'string' ? JSON.parse(row.doc) : row.doc;
    expect(parsed).toEqual(doc);
  });

  it('round-trips 4-byte UTF-8 (emoji) unchanged', async () => {
    const label = 'model 🚀 𝄞 ünï';
    await db.conn.execute('INSERT INTO smoke (id, label) VALUES (?, ?)', [20, label]);
    const r = await db.conn.execute('SELECT label, CHAR_LENGTH(label) AS chars FROM smoke WHERE id = 20');
    expect(r.rows[0]).toEqual({ label, chars: [...label].length }); // INT32 → number
  });
});
