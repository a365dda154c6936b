// Anchors (docs/multi-cluster.md, "Anchors", which says why and what vtgate does): a row that must
// live on one chosen ledger shard, not on a tenant's, is keyed by that shard's anchor — the first of
// `~a0`, `~a1`, … whose keyspace id under the `tenant` vindex falls in the shard's key range. The
// vindex is `xxhash`: XXH64 (seed 0) of the name's bytes, written little-endian (Vitess 24,
// vindexes/xxhash.go), computed here with no query (test/vitess/anchors.test.ts checks it against
// vtgate). One shard (MariaDB, or an unsharded keyspace): its anchor is `~a0`. The only I/O is the
// shard list (ledger/shards.ts).
import { DatabaseError } from '@planetscale/database';
import type { Db } from './db.ts';
import { ledgerShards, type LedgerShard } from './shards.ts';

export const anchorName = (i: number): string => `~a${i}`;
/** Candidates tried before giving up: 2 shards leave one without an anchor with odds 2^-1024. */
const MAX_CANDIDATES = 1024;

/** A shard's key range as lowercase hex, trailing zero bytes dropped ('' start: from the lowest; '' end: to the highest). */
export interface KeyRange {
  start: string;
  end: string;
}

/** Hex of a keyspace id or range bound, normalized as Vitess compares them (key.Normalize: trailing 0x00 bytes do not count). */
function normal(hex: string): string {
  const h = hex.toLowerCase();
  if (!/^(?:[0-9a-f]{2})*$/.test(h)) throw new Error(`not a keyspace id: "${hex}"`);
  return h.replace(/(?:00)+$/, '');
}

/** The key range of a shard named `ledger/-80`, `80-c0` or `80-`. */
export function shardRange(shard: string): KeyRange {
  const spec = shard.slice(shard.indexOf('/') + 1);
  const m = /^([0-9a-fA-F]*)-([0-9a-fA-F]*)$/.exec(spec);
  if (!m) throw new Error(`not a key range shard: "${shard}"`);
  return { start: normal(m[1] ?? ''), end: normal(m[2] ?? '') };
}

/** Normalized lowercase hex of equal digit width compares as the bytes do (a prefix is the lesser). */
export const inRange = (id: string, r: KeyRange): boolean => {
  const k = normal(id);
  return k >= r.start && (r.end === '' || k < r.end);
};

/** Index of the range holding the keyspace id `id` among `ranges` (a keyspace's shards cover every id once). */
export function rangeOf(ranges: readonly KeyRange[], id: string): number {
  const i = ranges.findIndex((r) => inRange(id, r));
  if (i < 0) throw new Error(`keyspace id ${id} is in no shard's range`);
  return i;
}

const M64 = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n;
const P2 = 0xc2b2ae3d27d4eb4fn;
const P3 = 0x165667b19e3779f9n;
const P4 = 0x85ebca77c2b2ae63n;
const P5 = 0x27d4eb2f165667c5n;
const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & M64;
const mix = (acc: bigint, lane: bigint): bigint => (rotl((acc + lane * P2) & M64, 31n) * P1) & M64;
const merge = (h: bigint, v: bigint): bigint => (((h ^ mix(0n, v)) * P1 + P4) & M64);

/** XXH64 with seed 0, as the xxHash specification defines it, in BigInt arithmetic mod 2^64 (names are short). */
export function xxh64(bytes: Uint8Array): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lane = (at: number) => view.getBigUint64(at, true);
  let at = 0;
  let h: bigint;
  if (bytes.length >= 32) {
    const v = [(P1 + P2) & M64, P2, 0n, (M64 + 1n - P1) & M64];
    for (; at + 32 <= bytes.length; at += 32) for (let i = 0; i < 4; i++) v[i] = mix(v[i] ?? 0n, lane(at + 8 * i));
    const [v1 = 0n, v2 = 0n, v3 = 0n, v4 = 0n] = v;
    h = (rotl(v1, 1n) + rotl(v2, 7n) + rotl(v3, 12n) + rotl(v4, 18n)) & M64;
    for (const x of v) h = merge(h, x);
  } else {
    h = P5;
  }
  h = (h + BigInt(bytes.length)) & M64;
  for (; at + 8 <= bytes.length; at += 8) h = (rotl(h ^ mix(0n, lane(at)), 27n) * P1 + P4) & M64;
  if (at + 4 <= bytes.length) {
    h = (rotl(h ^ ((BigInt(view.getUint32(at, true)) * P1) & M64), 23n) * P2 + P3) & M64;
    at += 4;
  }
  for (; at < bytes.length; at++) h = (rotl(h ^ ((BigInt(bytes[at] ?? 0) * P5) & M64), 11n) * P1) & M64;
  h = ((h ^ (h >> 33n)) * P2) & M64;
  h = ((h ^ (h >> 29n)) * P3) & M64;
  return h ^ (h >> 32n);
}

/**
 * The keyspace id (hex) of `id` under the `xxhash` vindex: XXH64 of its UTF-8 bytes, the 8 bytes
 * little-endian (vindexes/xxhash.go: binary.LittleEndian.PutUint64(hashed, xxhash.Sum64(id))).
 */
export function keyspaceId(id: string): string {
  const out = new DataView(new ArrayBuffer(8));
  out.setBigUint64(0, xxh64(new TextEncoder().encode(id)), true);
  return [...new Uint8Array(out.buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** For each shard (by name, in the order given), the first candidate whose keyspace id its range holds. */
export function searchAnchors(shards: readonly string[], idOf: (id: string) => string = keyspaceId, limit = MAX_CANDIDATES): string[] {
  const ranges = shards.map(shardRange);
  const anchors: (string | undefined)[] = shards.map(() => undefined);
  for (let i = 0; anchors.includes(undefined); i++) {
    if (i >= limit) throw new Error(`no anchor among ${limit} candidates for shard(s) ${shards.filter((_, j) => !anchors[j]).join(', ')}`);
    anchors[rangeOf(ranges, idOf(anchorName(i)))] ??= anchorName(i);
  }
  return anchors.map((a) => a ?? '');
}

export interface ShardAnchor {
  shard: LedgerShard;
  anchor: string;
}

/** Every ledger shard with its anchor, in the shards' order; one shard (MariaDB): `~a0`. */
export const anchorsOf = (shards: readonly LedgerShard[]): ShardAnchor[] => {
  if (shards.length <= 1) return shards.map((shard) => ({ shard, anchor: anchorName(0) }));
  const anchors = searchAnchors(shards.map((s) => s.name));
  return shards.map((shard, i) => ({ shard, anchor: anchors[i] ?? '' }));
};

/** The ledger's shards (ledger/shards.ts: SHOW VITESS_SHARDS) with their anchors. */
export const ledgerAnchors = async (db: Db): Promise<ShardAnchor[]> => anchorsOf(await ledgerShards(db));

/** The shard of `shards` holding `tenant`'s rows (no query: the vindex is a pure function of the name). */
export function shardOfTenant(shards: readonly LedgerShard[], tenant: string): LedgerShard {
  const only = shards.length === 1 ? shards[0] : undefined;
  if (only) return only;
  const shard = shards[rangeOf(shards.map((s) => shardRange(s.name)), keyspaceId(tenant))];
  if (!shard) throw new Error(`no shard for tenant ${tenant}`);
  return shard;
}

/**
 * A transaction refused for reaching a second shard (Vitess, transaction mode SINGLE: errno 1317,
 * "multi-db transaction attempted"): a stale anchor or tenant shard after a reshard. vtgate refuses
 * the first WRITE there; a read before it (even FOR UPDATE) passes and locks on that shard until the
 * rollback. Roll back, re-read the shards, retry once.
 */
export const isCrossShard = (err: unknown): boolean =>
  err instanceof DatabaseError && /errno 1317\b/.test(err.message) && /multi-db transaction attempted/.test(err.message);
