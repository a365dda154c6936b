// The `modeldock` CLI against the real Worker in workerd (wrangler dev) and a migrated test
// database: every command's output (not a TTY: plain text, no control codes), the exit code of
// each outcome, and that the key is never printed. Also the dashboard's static routes as the
// Worker serves them (headers, no cookie). The wait-to-ready paths are in test/e2e/cli.test.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { freePort } from '../../scripts/testenv/net.ts';
import { createLedgerDatabase, type LedgerDatabase } from '../support/ledger-database.ts';
import { runCli, type CliResult } from '../support/cli.ts';
import { startWorker, type WorkerInstance } from '../support/worker.ts';

const KEY = 'acme-cli-key-0123456789abcdef';
// A test that admits does so in a tenant of its own: acme's quota stays untouched whatever ran before.
const KEYS = { acme: KEY, files: 'files-cli-key-0123456789abcdef', flags: 'flags-cli-key-0123456789abcdef' };
let L: LedgerDatabase;
let W: WorkerInstance;
let env: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'modeldock-cli-'));

beforeAll(async () => {
  L = await createLedgerDatabase();
  for (const tenant of Object.keys(KEYS)) await L.setQuota(tenant, 'cpu=2', 'memory=4Gi');
  W = await startWorker({ databaseUrl: L.url, keys: KEYS });
  env = { MODELDOCK_URL: W.url, MODELDOCK_KEY: KEY };
});
afterAll(async () => {
  await W?.stop();
  await L?.drop();
});

const cli = (args: string[], extra: Record<string, string | undefined> = {}, stdin?: string) => runCli(args, { env: { ...env, ...extra }, stdin });
/** Exit code, stdout and stderr; the key appears in neither stream. */
function expectRun(r: CliResult, code: number): CliResult {
  expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(code);
  for (const key of Object.values(KEYS)) expect(r.stdout + r.stderr).not.toContain(key);
  expect(r.stdout + r.stderr).not.toContain('\x1b['); // not a TTY: no colours, no cursor codes
  return r;
}
const idOf = (stdout: string) => /admitted \S+ ([0-9A-Z]{26})/.exec(stdout)?.[1] ?? '';

describe('modeldock CLI against the Worker', () => {
  it('quota: a table per resource with used / hard and a bar', async () => {
    const r = expectRun(await cli(['quota']), 0);
    expect(r.stdout.split('\n').slice(0, 5)).toEqual([
      'tenant acme',
      'RESOURCE        USED / HARD  USAGE                        ACTIVE  RELEASING  BLOCKED  AVAILABLE',
      'cpu             0 / 2        [....................]   0%  0       0          0        2',
      'memory          0Mi / 4Gi    [....................]   0%  0Mi     0Mi        0Mi      4Gi',
      'nvidia.com/gpu  0 / 0        [....................]   0%  0       0          0        0',
    ]);
    const json = JSON.parse(expectRun(await cli(['quota', '-o', 'json']), 0).stdout) as { tenant: string; resources: Record<string, { hard: number }> };
    expect(json).toMatchObject({ tenant: 'acme', resources: { cpu: { hard: 2000 } } });
  });

  it('submit from a YAML file (flags override it), get, list as table/json/yaml, delete', async () => {
    const files = (args: string[]) => cli(args, { MODELDOCK_KEY: KEYS.files });
    const file = join(dir, 'chat.yaml');
    writeFileSync(file, 'name: chat\nimage: ghcr.io/acme/chat:1\nreplicas: 3\nresources:\n  cpu: 250m\n  memory: 256Mi\nenv:\n  - {name: MODEL, value: tiny}\n');
    const sub = expectRun(await files(['submit', '-f', file, '--replicas', '2', '--idempotency-key', 'cli-file-1']), 0);
    expect(sub.stdout).toMatch(/^admitted chat [0-9A-Z]{26}\n$/);
    const id = idOf(sub.stdout);

    // The same key and spec again: the same admission, nothing charged twice.
    const again = expectRun(await files(['submit', '-f', file, '--replicas', '2', '--idempotency-key', 'cli-file-1']), 0);
    expect(again.stdout).toBe(`already admitted (same Idempotency-Key) chat ${id}\n`);

    const get = expectRun(await files(['get', id.toLowerCase()]), 0);
    expect(get.stdout).toContain(`chat  ${id}`);
    expect(get.stdout).toContain('state:     admitted');
    expect(get.stdout).toContain('replicas:  2   resources per replica: cpu=250m memory=256Mi');
    expect(get.stdout).toMatch(/ok admitted +\d{4}-\d\d-\d\dT/);
    expect(get.stdout).toContain('- delivered  pending');
    expect(get.stdout).toContain('- scheduled  pending');

    const table = expectRun(await files(['list']), 0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID {26}NAME {2}STATE {5}REPLICAS {2}AGE +ENDPOINT$/);
    expect(table.stdout).toMatch(new RegExp(`${id}  chat  admitted  2 `));
    const json = JSON.parse(expectRun(await files(['list', '-o', 'json']), 0).stdout) as { items: Array<{ id: string; spec: { env: unknown } }> };
    expect(json.items.map((i) => i.id)).toContain(id);
    expect(json.items.find((i) => i.id === id)?.spec.env).toEqual([{ name: 'MODEL', value: 'tiny' }]);
    const yaml = parseYaml(expectRun(await files(['list', '--all', '-o', 'yaml']), 0).stdout) as { items: Array<{ id: string; state: string }> };
    expect(yaml.items.find((i) => i.id === id)?.state).toBe('admitted');

    const q = JSON.parse(expectRun(await files(['quota', '-o', 'json']), 0).stdout) as { resources: Record<string, { reserved: number }> };
    expect(q.resources.cpu?.reserved).toBe(500);

    const del = expectRun(await files(['delete', id]), 0);
    expect(del.stdout).toBe(`chat ${id}: deleting (quota is released once every pod is gone; --wait to follow)\n`);
  });

  it('submit from flags and from JSON on standard input; -o yaml prints the admission', async () => {
    const flags = expectRun(await cli(['submit', '--name', 'tiny', '--image', 'ghcr.io/acme/tiny:1', '--cpu', '100m', '--env', 'A=1', '--arg=--fast', '-o', 'yaml'], { MODELDOCK_KEY: KEYS.flags }), 0);
    const doc = parseYaml(flags.stdout) as { name: string; state: string; spec: { replicas: number; env: unknown; args: string[] } };
    expect(doc).toMatchObject({ name: 'tiny', state: 'admitted', spec: { replicas: 1, env: [{ name: 'A', value: '1' }], args: ['--fast'] } });
    expect(flags.stderr).toMatch(/^admitted tiny [0-9A-Z]{26}\n$/); // the message goes to stderr when stdout is a document
    const stdin = expectRun(await cli(['submit', '-f', '-'], { MODELDOCK_KEY: KEYS.flags }, JSON.stringify({ name: 'piped', image: 'ghcr.io/acme/tiny:1', resources: { cpu: '100m' } })), 0);
    expect(stdin.stdout).toMatch(/^admitted piped /);
  });

  it.each([
    ['quota exceeded → 3, the API message on one line', ['submit', '--name', 'big', '--image', 'ghcr.io/acme/big:1', '--replicas', '4', '--cpu', '1'], {}, 3, /^error: quota exceeded: cpu short by \d+ \(requested 4000, available \d+\)\n$/],
    ['invalid spec → 2 with the field paths', ['submit', '--name', 'Bad_Name', '--image', 'ghcr.io/acme/x:1', '--cpu', 'lots'], {}, 2, /^error: invalid request: name: must be a DNS-1123 label.*; resources\.cpu: cpu must be a Kubernetes quantity.*\n$/],
    ['unknown id → 4', ['get', '01JD5Y3QW5ZC8Y1G1M5N8D4X7K'], {}, 4, /^error: admission not found\n$/],
    ['malformed id → 2', ['get', 'nope'], {}, 2, /^error: invalid request: path\.id: must be an admission id \(ULID\)\n$/],
    ['wrong key → 7', ['quota'], { MODELDOCK_KEY: 'wrong-key-0123456789abcdef' }, 7, /^error: invalid API key\n$/],
    ['no key → 2', ['quota'], { MODELDOCK_KEY: undefined }, 2, /^error: no API key: set MODELDOCK_KEY or pass --key\n$/],
    ['bad flag → 2', ['list', '--colour'], {}, 2, /^error: Unknown option '--colour'/],
    ['unreadable file → 2', ['submit', '-f', '/nonexistent/spec.yaml'], {}, 2, /^error: cannot read \/nonexistent\/spec\.yaml: ENOENT\n$/],
  ] as const)('%s', async (_what, args, extra, code, stderr) => {
    const r = expectRun(await cli([...args], extra), code);
    expect(r.stderr).toMatch(stderr);
    expect(r.stdout).toBe('');
  });

  it('an API that does not answer → 8 within the request deadline', async () => {
    const port = await freePort();
    const r = expectRun(await cli(['quota', '--url', `http://127.0.0.1:${port}`]), 8);
    expect(r.stderr).toMatch(new RegExp(`^error: cannot reach the API at http://127\\.0\\.0\\.1:${port}: ECONNREFUSED\\n$`));
  });

  it('help lists the commands and the exit codes', async () => {
    const r = expectRun(await cli(['help']), 0);
    expect(r.stdout).toContain('submit    admit a model service');
    expect(r.stdout).toContain('3  quota exceeded');
    expect(expectRun(await cli(['help', 'submit']), 0).stdout).toContain('--idempotency-key KEY');
  });
});

describe('dashboard routes', () => {
  it('serves the page and its assets with a strict CSP, no framing, no cookie', async () => {
    for (const [path, type] of [
      ['/', /^text\/html/],
      ['/assets/app.js', /^text\/javascript|^application\/javascript/],
      ['/assets/startup.js', /javascript/],
      ['/assets/style.css', /^text\/css/],
    ] as const) {
      const res = await fetch(`${W.url}${path}`);
      const body = await res.text();
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('set-cookie')).toBeNull();
      if (path === '/') {
        expect(body).toContain('<script type="module" src="/assets/app.js"></script>');
        expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
        expect(body).not.toMatch(/\sstyle=|\son[a-z]+=/i); // no inline style or handler
      }
    }
  });

  it('an unknown asset is the API’s 404 envelope; the API routes still need the key', async () => {
    const res = await fetch(`${W.url}/assets/nope.js`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: 'not_found', message: 'file not found' } });
    expect((await fetch(`${W.url}/quota`)).status).toBe(401);
  });
});
