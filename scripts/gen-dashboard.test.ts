import { describe, expect, it } from 'vitest';
import type * as timeline from '../schema/timeline.ts';
import { describeFailure, formatDuration, startupStages } from '../schema/timeline.ts';
import { checkedInBundle, checkImports, dashboardBundle, dashboardFiles } from './gen-dashboard.ts';

it('functions/dashboard-files.ts is the bundle of dashboard/public/ and schema/timeline.ts (run `npm run gen:dashboard`)', () => {
  expect(checkedInBundle()).toBe(dashboardBundle());
});

describe('the startup timeline in the bundle', () => {
  const files = dashboardFiles();
  it('app.js imports it from /assets/startup.js', () => {
    expect(files.get('/assets/app.js')?.body).toContain("import { describeFailure, formatDuration, startupStages } from './startup.js';");
    expect(files.get('/assets/app.js')?.body).not.toMatch(/'[^']*schema\//);
  });
  it('/assets/startup.js is schema/timeline.ts as JavaScript: the same answers', async () => {
    const body = files.get('/assets/startup.js')?.body ?? '';
    const served = (await import(`data:text/javascript,${encodeURIComponent(body)}`)) as typeof timeline;
    const admission = { state: 'delivered', createdAt: '2026-12-01T10:00:00.000Z', binding: null, timeline: { admittedAt: '2026-12-01T10:00:00.000Z', deliveredAt: null, startedAt: '2026-12-01T10:00:01.000Z' } };
    expect(served.startupStages(admission)).toEqual(startupStages(admission));
    expect(served.formatDuration(187_000)).toBe(formatDuration(187_000));
    expect(served.describeFailure({ pod: 'p-1', reason: 'CrashLoopBackOff', exitCode: 1 })).toBe(describeFailure({ pod: 'p-1', reason: 'CrashLoopBackOff', exitCode: 1 }));
  });
});

describe('checkImports', () => {
  const js = (body: string) => ({ type: 'text/javascript; charset=utf-8', body });
  it('an import of a served file passes', () => {
    expect(() => checkImports(new Map([['/assets/a.js', js("import { b } from './b.js';")], ['/assets/b.js', js('export const b = 1;')]]))).not.toThrow();
  });
  it.each([
    ["import { z } from 'zod';", /imports 'zod'/],
    ["import { x } from '../../../schema/api.ts';", /imports '..\/..\/..\/schema\/api.ts'/],
    ["/** @type {import('./c.js').C} */\nlet c;", /imports '.\/c.js'/],
  ])('refuses what the bundle does not serve: %s', (source, message) => {
    expect(() => checkImports(new Map([['/assets/a.js', js(source)]]))).toThrow(message);
  });
});
