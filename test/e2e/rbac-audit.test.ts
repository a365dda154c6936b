// The RBAC matrix covers what the controller REALLY does: a full admission lifecycle (deliver,
// reconcile, ready, delete, release) plus a /metrics scrape, then every request the API server
// logged for system:serviceaccount:<ns>:modeldock-controller (audit log, metadata level) must be
// a cell of k8s/base/rbac-matrix.json where the matrix puts it — the lease in its own namespace,
// the tenant's objects in the tenant's namespace, reads across namespaces, the reviews cluster-wide
// — and none refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AUDIT_LOG } from '../../scripts/testenv/kube.ts';
import { allowedCells } from '../support/rbac-matrix.ts';
import { startSystem, type ControllerProcess, type System } from '../support/system.ts';
import { waitFor } from '../support/wait.ts';

let sys: System;
let ctl: ControllerProcess;
beforeAll(async () => {
  sys = await startSystem();
  ctl = await sys.startController('ctl-audit');
});
afterAll(async () => sys?.stop());

interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  user: { username: string };
  objectRef?: { apiGroup?: string; resource?: string; subresource?: string; namespace?: string };
  nonResourceURL?: string;
  requestURI: string;
  responseStatus?: { code?: number };
}

function auditOf(username: string): AuditEvent[] {
  const text = readFileSync(join(inject('stack').logDir, AUDIT_LOG), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.includes(username))
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.user.username === username && e.stage === 'ResponseComplete');
}

describe('RBAC matrix vs. what the controller did', () => {
  // Long-running requests (watches) log ResponseStarted and ResponseComplete: only the latter is counted.
  it('every API call of a full lifecycle is a cell of k8s/base/rbac-matrix.json, in its namespace, and none was refused', async () => {
    const [id] = await sys.admit(1);
    await sys.untilState([id!], 'ready');
    await ctl.metrics(); // TokenReview + SubjectAccessReview
    expect((await sys.api(`/requests/${id}`, { method: 'DELETE' })).status).toBe(202);
    await sys.untilState([id!], 'released');
    await ctl.proc.stop(); // watches end: their audit events complete

    const username = `system:serviceaccount:${sys.namespace}:modeldock-controller`;
    // A watch's event completes when the API server has seen the client go.
    const events = await waitFor('the watches to complete in the audit log', async () => {
      const all = auditOf(username);
      return all.some((e) => e.verb === 'watch' && e.objectRef?.resource === 'modelservices') ? all : undefined;
    });
    const own = new Set(allowedCells('own'));
    const tenants = new Set(allowedCells('tenants'));
    const cluster = new Set(allowedCells('cluster'));
    const where = (ns: string | undefined, cell: string) =>
      ns === sys.namespace ? own.has(cell) : ns === sys.tenantNamespace ? tenants.has(cell) : ns === undefined ? tenants.has(cell) || cluster.has(cell) : false;
    const used = new Map<string, number>();
    const outside: string[] = [];
    const refused: string[] = [];
    for (const e of events) {
      const ref = e.objectRef ?? {};
      const resource = ref.subresource ? `${ref.resource}/${ref.subresource}` : (ref.resource ?? `nonResource:${e.nonResourceURL}`);
      const cell = `${ref.apiGroup ?? ''}|${resource}|${e.verb}`;
      used.set(cell, (used.get(cell) ?? 0) + 1);
      if (!where(ref.namespace, cell)) outside.push(`${cell} ${e.requestURI}`);
      if (e.responseStatus?.code === 403) refused.push(`${cell} ${e.requestURI}`);
    }
    console.log(`[measure] controller API calls by cell (audit log, ${events.length} events):\n${[...used].sort().map(([c, n]) => `  ${c} ×${n}`).join('\n')}`);
    expect(outside).toEqual([]);
    expect(refused).toEqual([]);
    // The run exercised the heart of the table: delivery, reconcile, deletion, leases, events, metrics auth.
    for (const cell of [
      'modeldock.io|modelservices|create',
      'modeldock.io|modelservices|delete',
      'modeldock.io|modelservices|watch',
      'modeldock.io|modelservices/status|update',
      'apps|deployments|create',
      '|namespaces|create',
      '|resourcequotas|create',
      'networking.k8s.io|networkpolicies|create',
      '|services|create',
      '|pods|list',
      'coordination.k8s.io|leases|update',
      'events.k8s.io|events|create',
      'authentication.k8s.io|tokenreviews|create',
      'authorization.k8s.io|subjectaccessreviews|create',
    ]) {
      expect(used.has(cell), cell).toBe(true);
    }
  });
});
