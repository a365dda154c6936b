// The dashboard in a real headless browser (Debian's chromium through playwright-core) against
// the whole system: paste the key, see the quota as bars (never lagging the rows: the render that
// first shows an admission counts its charge) and an admission become ready with its
// timeline and endpoint (with a curl example and a Copy button), cancel and then confirm a
// delete, and see it released. The page must keep the key in sessionStorage only (no cookie,
// never in the URL, never shown) and run without a single Content-Security-Policy violation.
// A screenshot of the page is saved for the README.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { inject } from 'vitest';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { launchBrowser, type Browser } from '../support/browser.ts';
import { startSystem, TENANT_KEY, type System } from '../support/system.ts';

let sys: System;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
  sys = await startSystem();
  await sys.startController('ctl-dashboard');
});
afterAll(async () => {
  await browser?.close();
  await sys?.stop();
});

/** A tab of the test's own on the dashboard's login form, with the console and page errors it collects; closed when the test ends. */
async function openDashboard(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.context.newPage();
  onTestFinished(() => page.close());
  page.setDefaultTimeout(30_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(sys.worker.url);
  await expect.poll(() => page.locator('#login').isVisible()).toBe(true);
  return { page, problems };
}

describe('dashboard', () => {
  it('key → quota bars and admissions; ready with timeline, endpoint and how to call it; delete with confirmation; released', async () => {
    const { page, problems } = await openDashboard();
    const row = (id: string) => page.locator(`tr[data-id="${id}"]`);
    await page.fill('#key', TENANT_KEY);
    await page.click('#key-form button[type=submit]');
    await page.locator('#tenant', { hasText: 'tenant acme' }).waitFor();
    expect(await page.locator('#quota meter').count()).toBe(4); // cpu, memory, GPUs, modelservices
    expect(page.url()).not.toContain(TENANT_KEY);

    // The bars never lag the rows: the page's next list read is held while the admission is
    // charged (a quota read already in flight finishes first), so the list sees the admission; the
    // very render that first shows its row must count its charge (2 × 2 CPUs).
    const quotaReads = new Set<Request>();
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/quota') quotaReads.add(r);
    });
    page.on('requestfinished', (r) => quotaReads.delete(r));
    page.on('requestfailed', (r) => quotaReads.delete(r));
    let releaseList!: () => void;
    const listHeld = new Promise<void>((held) => {
      void page.route('**/requests?limit=*', async (route) => {
        held();
        await new Promise<void>((release) => (releaseList = release));
        await route.continue();
      }, { times: 1 });
    });
    await listHeld;
    await expect.poll(() => quotaReads.size, { message: 'no quota read in flight' }).toBe(0);
    const [id] = await sys.admit(1, { name: 'chat', image: 'ghcr.io/acme/mock-model:0.1.0', replicas: 2, resources: { cpu: '2', memory: '4Gi' } });
    releaseList();
    await row(id!).waitFor();
    expect(await page.locator('#quota meter[data-resource="cpu"]').evaluate((m) => (m as HTMLMeterElement).value)).toBe(4000);

    await row(id!).and(page.locator('[data-state="ready"]')).waitFor({ timeout: 90_000 });
    const ready = row(id!);
    expect(await ready.locator('.state').textContent()).toBe('ready');
    expect(await ready.locator('li[data-stage="ready"]').getAttribute('data-status')).toBe('done');
    expect(await ready.locator('li[data-stage="admitted"]').getAttribute('data-status')).toBe('done');
    // The endpoint: the model's URL at the edge (as the API reports it), a Copy button, and a curl
    // example that names the key as $MODELDOCK_KEY — the key itself is nowhere on the page.
    const endpoint = (await sys.api(`/requests/${id}`)).body.endpoint as string;
    expect(endpoint).toMatch(new RegExp(`^https?://[^/]+/v1/models/${id}$`));
    expect(await ready.locator('.endpoint code.url').textContent()).toBe(endpoint);
    expect(await ready.locator('.endpoint code.example').textContent()).toBe(
      `curl -N '${endpoint}/chat/completions' -H "Authorization: Bearer $MODELDOCK_KEY" -H 'Content-Type: application/json' -d '{"model":"default","messages":[{"role":"user","content":"Hello"}],"stream":true}'`,
    );
    expect(await page.locator('body').textContent()).not.toContain(TENANT_KEY);
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(sys.worker.url).origin });
    await ready.locator('button[data-action="copy-url"]').click();
    await page.locator('#notice', { hasText: 'Copied the URL.' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(endpoint);
    expect(await ready.locator('.replicas').textContent()).toBe('2 replicas');
    // No cluster registered in this stack: the admission is placed on "default", as the API says.
    expect((await sys.api(`/requests/${id}`)).body.cluster).toBe('default');
    expect(await ready.locator('.cluster').textContent()).toBe('on default');
    // A change of replicas made elsewhere (the CLI, the API) shows up, then settles.
    expect((await sys.api(`/requests/${id}`, { method: 'PATCH', body: { replicas: 1 }, idempotencyKey: 'dash-scale-1' })).status).toBe(202);
    await expect.poll(() => ready.locator('.replicas').textContent(), { timeout: 60_000 }).toBe('1 replica');
    await expect.poll(() => page.locator('#quota meter[data-resource="cpu"]').evaluate((m) => (m as HTMLMeterElement).value)).toBe(2000);

    const shot = join(inject('stack').runDir, 'dashboard.png');
    await page.screenshot({ path: shot });
    if (process.env.MODELDOCK_UPDATE_SCREENSHOT === '1') {
      mkdirSync(join(repoRoot, 'docs'), { recursive: true });
      copyFileSync(shot, join(repoRoot, 'docs/dashboard.png'));
    }

    // Cancel first: nothing happens.
    await ready.locator('button[data-action="delete"]').click();
    await page.locator('#confirm[open]').waitFor();
    expect(await page.locator('#confirm-id').textContent()).toBe(id);
    await page.click('#confirm-cancel');
    await page.locator('#confirm[open]').waitFor({ state: 'detached' });
    expect((await sys.api(`/requests/${id}`)).body.state).toBe('ready');

    await ready.locator('button[data-action="delete"]').click();
    await page.click('#confirm-delete');
    await row(id!).and(page.locator('[data-state="released"]')).waitFor({ timeout: 90_000 });
    expect((await sys.api(`/requests/${id}`)).body.state).toBe('released');
    await expect.poll(() => page.locator('#quota meter[data-resource="cpu"]').evaluate((m) => (m as HTMLMeterElement).value)).toBe(0);

    // The key: in this tab's sessionStorage only.
    expect(await browser.context.cookies()).toEqual([]);
    expect(await page.evaluate(() => [sessionStorage.getItem('modeldock.key'), localStorage.length])).toEqual([TENANT_KEY, 0]);
    await page.click('#forget');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await expect.poll(() => page.locator('#login').isVisible()).toBe(true);

    expect(problems).toEqual([]);
  });

  it('a wrong key is refused and forgotten', async () => {
    const { page, problems } = await openDashboard();
    await page.fill('#key', 'not-the-key-0123456789abcdef');
    await page.click('#key-form button[type=submit]');
    await page.locator('#error', { hasText: 'The key was refused: invalid API key' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // The refused key's 401 is the only console error (the browser logs failed loads): one at least.
    await expect.poll(() => problems.length, { message: 'a console error for the refused key' }).toBeGreaterThan(0);
    expect(problems.filter((p) => !/401/.test(p))).toEqual([]);
  });
});
