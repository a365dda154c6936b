// The Worker in workerd WITHOUT wrangler dev's proxy and without Miniflare: the bundle
// `wrangler deploy --dry-run` makes, served by the workerd binary wrangler itself runs, from a
// config written here (wrangler.toml's compatibility date and [vars] plus the secrets, one HTTP
// socket on loopback, outbound fetch allowed to loopback for the ps-http-sim; no rate limits). Nothing else runs
// in front of the Worker — no dev proxy, no Miniflare entry Worker — as at the edge. B1/B2 run it
// beside `wrangler dev` to show what the dev proxy costs per request.
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { canConnect, freePort } from '../../scripts/testenv/net.ts';
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

/** A workerd config (Cap'n Proto text) serving `bundle` (a path relative to the config file) on 127.0.0.1:`port` with text bindings. */
export function workerdConfig(o: { port: number; bundle: string; compatibilityDate: string; bindings: Record<string, string> }): string {
  const bindings = Object.entries(o.bindings).map(([name, text]) => `(name = ${JSON.stringify(name)}, text = ${JSON.stringify(text)})`);
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${o.port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed ${JSON.stringify(o.bundle)}) ],
  compatibilityDate = ${JSON.stringify(o.compatibilityDate)},
  bindings = [ ${bindings.join(', ')} ],
  globalOutbound = "internet",
);
`;
}

export interface DirectWorker {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Bundles functions/worker.ts (wrangler deploy --dry-run) and serves it with workerd alone. */
export async function startDirectWorker(opts: { dir: string; logFile: string; vars: Record<string, string> }): Promise<DirectWorker> {
  mkdirSync(opts.dir, { recursive: true });
  await run(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', `--outdir=${opts.dir}`], {
    cwd: repoRoot,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1', CI: '1' },
    maxBuffer: 1 << 24,
  });
  const toml = wranglerToml();
  const port = await freePort();
  const config = join(opts.dir, 'workerd.capnp');
  // The secrets are in this file: it lives in the bench's run directory only. workerd alone has no
  // rate-limiting binding (wrangler.toml's [[ratelimits]] are Miniflare's and the edge's), so this
  // Worker runs with RATE_LIMITS = "off", said explicitly (functions/rate-limit.ts).
  writeFileSync(config, workerdConfig({ port, bundle: 'worker.js', compatibilityDate: toml.compatibilityDate, bindings: { ...toml.vars, RATE_LIMITS: 'off', ...opts.vars } }), { mode: 0o600 });
  const log = createWriteStream(opts.logFile, { flags: 'a' });
  const proc = spawn(join(repoRoot, 'node_modules/workerd/bin/workerd'), ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.pipe(log);
  proc.stderr.pipe(log);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  for (const deadline = Date.now() + 30_000; !(await canConnect(port)); await sleep(50)) {
    if (gone || Date.now() > deadline) throw new Error(`workerd did not serve on ${port} (log: ${opts.logFile})`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid as number,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      log.end();
    },
  };
}
