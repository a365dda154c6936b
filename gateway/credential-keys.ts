// The keys the gateway verifies credentials with: a mounted Secret, one file per key, the file's
// name the key id (the JWT kid), its content (trimmed) the secret. The kubelet updates a Secret
// volume in place (an atomic swap of the `..data` link), so the folder is re-read every 30 s and
// a key is added or removed without a restart (schema/gateway-credential.ts: rotation).
// Secrets are never logged: only key ids, file names and why a file was refused.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../controller/runtime/log.ts';
import { credentialKeySchema } from '../schema/gateway-credential.ts';

export const KEYS_RELOAD_MS = 30_000;
/** A key file larger than this is not a key (a secret needs 32 bytes; 64 hex characters is usual). */
const MAX_KEY_FILE_BYTES = 4096;

export interface KeysRead {
  keys: Map<string, string>;
  /** Files that are not keys, with why (never their content). */
  rejected: Array<{ file: string; reason: string }>;
}

/** Reads every key file of `dir`; the kubelet's `..data`-style entries (any dot entry) are skipped. Throws when `dir` cannot be listed. */
export async function readKeysDir(dir: string): Promise<KeysRead> {
  const keys = new Map<string, string>();
  const rejected: KeysRead['rejected'] = [];
  for (const file of (await readdir(dir)).sort()) {
    if (file.startsWith('.')) continue;
    const path = join(dir, file);
    try {
      const info = await stat(path); // follows the kubelet's symlinks
      if (!info.isFile()) continue;
      if (info.size > MAX_KEY_FILE_BYTES) {
        rejected.push({ file, reason: `larger than ${MAX_KEY_FILE_BYTES} bytes` });
        continue;
      }
      const parsed = credentialKeySchema.safeParse({ id: file, secret: (await readFile(path, 'utf8')).trim() });
      if (parsed.success) keys.set(parsed.data.id, parsed.data.secret);
      else rejected.push({ file, reason: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
    } catch (err) {
      // Removed between the listing and the read (a swap in progress): the next read sees the new set.
      rejected.push({ file, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return { keys, rejected };
}

export type Schedule = (run: () => void, everyMs: number) => () => void;
const every: Schedule = (run, ms) => {
  const timer = setInterval(run, ms);
  timer.unref();
  return () => clearInterval(timer);
};

export interface CredentialKeysOptions {
  dir: string;
  log: Logger;
  intervalMs?: number;
  schedule?: Schedule;
}

/** The current keys, re-read on a schedule. A folder that cannot be read keeps the last keys read. */
export class CredentialKeys {
  readonly #opts: CredentialKeysOptions;
  #keys: ReadonlyMap<string, string> = new Map();
  /** What was last reported, so only a change is logged (every 30 s otherwise). */
  #reported = '';
  #cancel: (() => void) | undefined;
  #reading: Promise<void> | undefined;

  constructor(opts: CredentialKeysOptions) {
    this.#opts = opts;
  }

  get keys(): ReadonlyMap<string, string> {
    return this.#keys;
  }

  /** Reads the folder now (a read already under way is joined, not repeated). */
  reload(): Promise<void> {
    this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** The first read, then one every intervalMs until stop(). */
  async start(): Promise<void> {
    await this.reload();
    this.#cancel ??= (this.#opts.schedule ?? every)(() => void this.reload(), this.#opts.intervalMs ?? KEYS_RELOAD_MS);
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }

  async #read(): Promise<void> {
    const { dir, log } = this.#opts;
    let read: KeysRead;
    try {
      read = await readKeysDir(dir);
    } catch (err) {
      this.#report(`unreadable`, () => log.error('credential keys unreadable; keeping the keys read before', { dir, err, keys: [...this.#keys.keys()] }));
      return;
    }
    this.#keys = read.keys;
    const ids = [...read.keys.keys()];
    // Secrets enter the comparison (a key rewritten under its id is a change) but never the log.
    const state = JSON.stringify([...read.keys, read.rejected]);
    this.#report(state, () => {
      for (const r of read.rejected) log.warn('credential key file refused', { dir, file: r.file, reason: r.reason });
      if (ids.length === 0) log.error('no credential key: every request is refused', { dir });
      else log.info('credential keys loaded', { dir, keys: ids });
    });
  }

  #report(state: string, say: () => void): void {
    if (state === this.#reported) return;
    this.#reported = state;
    say();
  }
}
