// A real headless browser for the dashboard test: Debian's chromium (installed by
// scripts/testenv/ensure-chromium.sh when absent) driven by playwright-core. A machine without
// it fails the test with the reason — the browser test is never skipped.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext } from 'playwright-core';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export const CHROMIUM = process.env.MODELDOCK_CHROMIUM ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Installs chromium if needed (as root), then launches it with a fresh profile. */
export async function launchBrowser(): Promise<Browser> {
  try {
    await promisify(execFile)('bash', [join(repoRoot, 'scripts/testenv/ensure-chromium.sh')], { timeout: 600_000, env: { ...process.env, MODELDOCK_CHROMIUM: CHROMIUM } });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`the dashboard browser test needs Chromium at ${CHROMIUM}: ${(e.stderr || e.message).trim()}`, { cause: err });
  }
  const profile = mkdtempSync(join(tmpdir(), 'modeldock-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    // playwright-core adds its own --headless; the flags here are the ones this machine needs.
    headless: true,
    args: CHROMIUM_FLAGS.filter((f) => f !== '--headless'),
    viewport: { width: 1200, height: 720 },
    timeout: 60_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
