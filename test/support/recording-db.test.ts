import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/testenv/stack.ts';
import { callSite } from './recording-db.ts';

const at = (fn: string, file: string, line = 10) => (fn ? `    at ${fn} (file://${repoRoot}/${file}:${line}:5)` : `    at file://${repoRoot}/${file}:${line}:5`);

describe('callSite', () => {
  it('names the innermost repository function, skipping the recorder, the seam, tests and node_modules', () => {
    const stack = [
      'Error',
      at('StatementLog.#run', 'test/support/recording-db.ts'),
      at('Object.execute', 'ledger/db.ts'),
      at('async chargeQuota', 'functions/db/quota.ts', 22),
      at('async admitOnce', 'functions/services/admit.ts'),
      at('async <anonymous>', 'test/vitess/statements.test.ts'),
    ].join('\n');
    expect(callSite(stack)).toBe('functions/db/quota.ts:chargeQuota');
  });

  it('an anonymous callback takes the next named frame of its module, else its line', () => {
    const named = ['Error', at('', 'controller/reservation/quota-moves.ts', 148), at('async release', 'controller/reservation/quota-moves.ts', 140)].join('\n');
    expect(callSite(named)).toBe('controller/reservation/quota-moves.ts:release');
    const bare = ['Error', at('', 'controller/reservation/quota-moves.ts', 148), at('Object.transaction', 'ledger/db.ts')].join('\n');
    expect(callSite(bare)).toBe('controller/reservation/quota-moves.ts:<callback@148>');
    expect(callSite('Error\n    at node:internal/process:1:1')).toBe('(unknown)');
  });
});
