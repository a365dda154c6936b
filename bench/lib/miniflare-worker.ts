// The Worker in workerd WITHOUT wrangler dev's proxy: the bundle `wrangler deploy --dry-run`
// makes, served by Miniflare (the library wrangler dev itself runs workerd with) on a loopback
// port, with wrangler.toml's [vars] plus the secrets. B1/B2 run it beside `wrangler dev` to show
// what the dev proxy (a Node process in front of workerd) costs per request.
import { execFile } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { freePort } from '../../scripts/testenv/net.ts';
import { repoRoot } from '../../scripts/testenv/stack.ts';

const run = promisify(execFile);

/** wrangler.toml's top-level fields and [vars] (flat `KEY = "value"` lines: all this file has). */
export function wranglerToml(text = readFileSync(join(repoRoot, 'wrangler.toml'), 'utf8')): { compatibilityDate: string; vars: Record<string, string> } {
  const vars: Record<string, string> = {};
  let section = '';
  let compatibilityDate = '';
  for (const line of text.split('\n')) {
    const s = /^\s*\[([^\]]+)\]/.exec(line);
    if (s) section = s[1] as string;
    const kv = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"]*)"/.exec(line);
    if (!kv) continue;
    if (section === 'vars') vars[kv[1] as string] = kv[2] as string;
    if (section === '' && kv[1] === 'compatibility_date') compatibilityDate = kv[2] as string;
  }
  return { compatibilityDate, vars };
}

export interface DirectWorker {
  url: string;
  stop(): Promise<void>;
}

/** Bundles functions/worker.ts (wrangler deploy --dry-run) and serves it with Miniflare. */
export async function startDirectWorker(opts: { dir: string; logFile: string; vars: Record<string, string> }): Promise<DirectWorker> {
  mkdirSync(opts.dir, { recursive: true });
  await run(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', `--outdir=${opts.dir}`], {
    cwd: repoRoot,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: '1' },
    maxBuffer: 1 << 24,
  });
  const toml = wranglerToml();
  const port = await freePort();
  const log = createWriteStream(opts.logFile, { flags: 'a' });
  const mf = new Miniflare({
    host: '127.0.0.1',
    port,
    modules: true,
    scriptPath: join(opts.dir, 'worker.js'),
    compatibilityDate: toml.compatibilityDate,
    bindings: { ...toml.vars, ...opts.vars },
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      stdout.pipe(log);
      stderr.pipe(log);
    },
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  return {
    url,
    async stop() {
      await mf.dispose();
      log.end();
    },
  };
}
