import { describe, expect, it } from 'vitest';
import { splitStatements } from '../ledger/migrate.ts';
import { parseDotVars } from './database-url.ts';
import { defaultModelServices, parseLimits, parseResolveArgs, UsageError } from './tenant.ts';

describe('npm run tenant: parseLimits', () => {
  it('parses Kubernetes quantities into ledger units', () => {
    expect(parseLimits(['cpu=8', 'memory=32Gi', 'nvidia.com/gpu=2'])).toEqual({ cpu: 8000, memory: 32_768, 'nvidia.com/gpu': 2 });
    expect(parseLimits(['cpu=500m'])).toEqual({ cpu: 500 });
    expect(parseLimits(['modelservices=20'])).toEqual({ modelservices: 20 });
  });
  it('takes the default count limit from MODELDOCK_DEFAULT_MODELSERVICES (20 when unset)', () => {
    expect(defaultModelServices({})).toBe(20);
    expect(defaultModelServices({ MODELDOCK_DEFAULT_MODELSERVICES: '5' })).toBe(5);
    expect(() => defaultModelServices({ MODELDOCK_DEFAULT_MODELSERVICES: 'many' })).toThrow(UsageError);
  });
  it.each([[[]], [['cpu']], [['disk=1']], [['cpu=lots']], [['nvidia.com/gpu=0.5']], [['cpu=1=2']], [['modelservices=1.5']]])('refuses %j', (args) => {
    expect(() => parseLimits(args)).toThrow(UsageError);
  });
});

describe('npm run tenant: parseResolveArgs', () => {
  const id = '01M8KD1WX8FZMBN60NK93TRSF5';
  it('reads the id, the decision and the reason', () => {
    expect(parseResolveArgs([id, '--release', '--reason', 'CR replaced by hand, checked'])).toEqual({ id, decision: 'release', reason: 'CR replaced by hand, checked' });
    expect(parseResolveArgs(['--keep', `--reason=still running elsewhere`, id])).toEqual({ id, decision: 'keep', reason: 'still running elsewhere' });
  });
  it.each([
    [[id, '--release']],
    [[id, '--reason', 'x']],
    [[id, '--release', '--keep', '--reason', 'x']],
    [['not-a-ulid', '--release', '--reason', 'x']],
    [[id, '--release', '--reason', '  ']],
    [[id, '--release', '--reason', 'x', '--force']],
  ])('refuses %j', (args) => {
    expect(() => parseResolveArgs(args)).toThrow(UsageError);
  });
});

describe('npm run migrate: splitStatements', () => {
  it('drops comment lines and splits at a semicolon ending a line', () => {
    const sql = '-- header; with a semicolon;\nCREATE TABLE a (x INT);\n\n-- b\nINSERT INTO a VALUES (1);\n';
    expect(splitStatements(sql)).toEqual(['CREATE TABLE a (x INT)', 'INSERT INTO a VALUES (1)']);
  });
});

describe('.dev.vars parsing', () => {
  it('reads KEY=value lines, quoted or not, ignoring comments', () => {
    expect(parseDotVars("# c\nDATABASE_URL='http://u:p@h:1'\nADMISSION_KEYS_JSON={\"a\":\"b\"}\n")).toEqual({
      DATABASE_URL: 'http://u:p@h:1',
      ADMISSION_KEYS_JSON: '{"a":"b"}',
    });
  });
});
