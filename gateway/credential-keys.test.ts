import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../controller/runtime/log.ts';
import { CredentialKeys, KEYS_RELOAD_MS, readKeysDir, type Schedule } from './credential-keys.ts';

const SECRET_A = 'a'.repeat(32);
const SECRET_B = 'b'.repeat(64);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gateway-keys-'));
  dirs.push(d);
  return d;
}

/** A Secret volume as the kubelet writes it: files in a timestamped folder, `..data` linked to it, each key a link through `..data`. */
function secretVolume(files: Record<string, string>) {
  const dir = tempDir();
  let n = 0;
  const write = (next: Record<string, string>) => {
    const version = `..2026_01_01_00_00_0${n++}`;
    mkdirSync(join(dir, version));
    for (const [name, content] of Object.entries(next)) writeFileSync(join(dir, version, name), content);
    symlinkSync(version, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data')); // the atomic swap
    for (const name of Object.keys(next)) {
      try {
        symlinkSync(join('..data', name), join(dir, name));
      } catch {
        // the link exists already: it follows ..data
      }
    }
  };
  write(files);
  return { dir, write };
}

function recorder() {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { lines, log, text: () => JSON.stringify(lines) };
}

describe('readKeysDir', () => {
  it('reads each file as a key (its name the id, its trimmed content the secret), through the kubelet\'s links, skipping dot entries', async () => {
    const { dir } = secretVolume({ k1: `${SECRET_A}\n`, 'k2.next': SECRET_B });
    const read = await readKeysDir(dir);
    expect([...read.keys]).toEqual([
      ['k1', SECRET_A],
      ['k2.next', SECRET_B],
    ]);
    expect(read.rejected).toEqual([]);
  });

  it('refuses a short secret, a bad id and an oversized file, with why but never the content', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'short'), 'too-short-secret');
    writeFileSync(join(dir, 'bad id'), SECRET_A);
    writeFileSync(join(dir, 'huge'), 'x'.repeat(5000));
    writeFileSync(join(dir, 'good'), SECRET_A);
    mkdirSync(join(dir, 'a-folder'));
    const read = await readKeysDir(dir);
    expect([...read.keys.keys()]).toEqual(['good']);
    expect(read.rejected.map((r) => r.file)).toEqual(['bad id', 'huge', 'short']);
    expect(read.rejected.find((r) => r.file === 'short')!.reason).toMatch(/at least 32 bytes/);
    expect(JSON.stringify(read.rejected)).not.toContain('too-short-secret');
  });

  it('throws when the folder cannot be listed', async () => {
    await expect(readKeysDir(join(tempDir(), 'absent'))).rejects.toThrow(/ENOENT/);
  });
});

describe('CredentialKeys', () => {
  it('re-reads on its schedule (every 30 s): a key added and one removed take effect without a restart', async () => {
    const volume = secretVolume({ old: SECRET_A });
    let tick: (() => void) | undefined;
    let every = 0;
    const schedule: Schedule = (run, ms) => {
      tick = run;
      every = ms;
      return () => (tick = undefined);
    };
    const { log, text } = recorder();
    const keys = new CredentialKeys({ dir: volume.dir, log, schedule });
    await keys.start();
    expect(every).toBe(KEYS_RELOAD_MS);
    expect(KEYS_RELOAD_MS).toBe(30_000);
    expect([...keys.keys.keys()]).toEqual(['old']);

    volume.write({ old: SECRET_A, new: SECRET_B });
    tick!();
    await keys.reload(); // joins the read the tick started
    expect([...keys.keys.keys()].sort()).toEqual(['new', 'old']);

    rmSync(join(volume.dir, 'old'));
    volume.write({ new: SECRET_B });
    await keys.reload();
    expect([...keys.keys]).toEqual([['new', SECRET_B]]);
    expect(text()).not.toContain(SECRET_A);
    expect(text()).not.toContain(SECRET_B);
    keys.stop();
    expect(tick).toBeUndefined();
  });

  it('logs a change once, not every read; a refused file by name and reason', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'k1'), SECRET_A);
    writeFileSync(join(dir, 'weak'), 'short');
    const { log, lines } = recorder();
    const keys = new CredentialKeys({ dir, log, schedule: () => () => undefined });
    await keys.reload();
    await keys.reload();
    expect(lines.map((l) => [l.msg, l.file ?? l.keys])).toEqual([
      ['credential key file refused', 'weak'],
      ['credential keys loaded', ['k1']],
    ]);
    writeFileSync(join(dir, 'k1'), SECRET_B); // the same id, a new secret: a change
    await keys.reload();
    expect(lines.filter((l) => l.msg === 'credential keys loaded')).toHaveLength(2);
  });

  it('a folder that cannot be read keeps the keys read before; no key at all is an error', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'k1'), SECRET_A);
    const { log, lines } = recorder();
    const keys = new CredentialKeys({ dir, log, schedule: () => () => undefined });
    await keys.reload();
    rmSync(dir, { recursive: true });
    await keys.reload();
    expect([...keys.keys.keys()]).toEqual(['k1']);
    expect(lines.at(-1)).toMatchObject({ level: 'error', msg: 'credential keys unreadable; keeping the keys read before', keys: ['k1'] });
    mkdirSync(dir);
    await keys.reload();
    expect(keys.keys.size).toBe(0);
    expect(lines.at(-1)).toMatchObject({ level: 'error', msg: 'no credential key: every request is refused' });
  });
});
