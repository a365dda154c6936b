import { expect, it } from 'vitest';
import { checkedInBundle, dashboardBundle } from './gen-dashboard.ts';

it('functions/dashboard-files.ts is the bundle of dashboard/public/ (run `npm run gen:dashboard`)', () => {
  expect(checkedInBundle()).toBe(dashboardBundle());
});
