import { describe, expect, it } from 'vitest';
import { classifyPlan, parsePlan, type PlanNode } from './vexplain.ts';

const ledger = { Name: 'ledger', Sharded: true };
const global = { Name: 'global', Sharded: false };
const route = (Variant: string, Keyspace = ledger, OperatorType = 'Route'): PlanNode => ({ OperatorType, Variant, Keyspace });

describe('classifyPlan', () => {
  it('a route on the vindex value is single-shard', () => {
    expect(classifyPlan(route('EqualUnique'))).toEqual({ reach: 'single-shard', keyspaces: ['ledger'], routes: ['Route:EqualUnique'] });
    expect(classifyPlan(route('Sharded', ledger, 'Insert')).reach).toBe('single-shard');
  });

  it('no vindex value is a scatter; several values are multi-shard', () => {
    expect(classifyPlan(route('Scatter', ledger, 'Update')).reach).toBe('scatter');
    expect(classifyPlan(route('IN')).reach).toBe('multi-shard');
    expect(classifyPlan(route('Whatever')).reach).toBe('scatter');
  });

  it('the unsharded keyspace is unsharded; no route at all is none', () => {
    expect(classifyPlan(route('Unsharded', global)).reach).toBe('unsharded');
    expect(classifyPlan({ OperatorType: 'Projection' }).reach).toBe('none');
  });

  it('two keyspaces in one plan are cross-keyspace, whatever each route is', () => {
    const join: PlanNode = { OperatorType: 'Join', Variant: 'Join', Inputs: [route('Unsharded', global), route('EqualUnique')] };
    expect(classifyPlan(join)).toMatchObject({ reach: 'cross-keyspace', keyspaces: ['global', 'ledger'] });
  });

  it('single-shard routes combined by vtgate are a vtgate join; the worst route wins', () => {
    const join: PlanNode = { OperatorType: 'Join', Variant: 'LeftJoin', Inputs: [route('EqualUnique'), route('EqualUnique')] };
    expect(classifyPlan(join).reach).toBe('vtgate-join');
    expect(classifyPlan({ ...join, Inputs: [route('EqualUnique'), route('Scatter')] }).reach).toBe('scatter');
  });

  it('an insert without the vindex column has no vindex value (vtgate would place it by NULL)', () => {
    const insert = (tenant: string): PlanNode => ({ ...route('Sharded', ledger, 'Insert'), VindexValues: { tenant } });
    expect(classifyPlan(insert('null')).reach).toBe('no-vindex-value');
    expect(classifyPlan(insert(':vtg1')).reach).toBe('single-shard');
  });
});

describe('parsePlan', () => {
  it('reads the JSON cell and refuses anything else', () => {
    expect(parsePlan('{"OperatorType":"Route","Variant":"Scatter"}').Variant).toBe('Scatter');
    expect(() => parsePlan('{"rows":1}')).toThrow(/not a vtgate plan/);
  });
});
