import { describe, expect, it } from 'vitest';
import { DatabaseUnavailable } from '../../ledger/db.ts';
import { LAST_ERROR_MAX_CHARS, lastErrorText } from '../../schema/tenant-errors.ts';
import { mysqlLength, printable } from '../../schema/text.ts';
import { KubeApiError, TerminalError } from '../runtime/errors.ts';
import { scriptedLedgerDb } from '../../test/support/reconcile-fakes.ts';
import { claimedRow, EPOCH, KEY, NOW } from '../../test/support/reservation-fixtures.ts';
import { fail } from './outbox-store.ts';
import { SHOWN_FOREIGN, shownConflict, shownError } from './shown-errors.ts';
import { transition } from './transitions.ts';

const PATH = '/apis/modeldock.io/v1alpha1/namespaces/modeldock-lab/modelservices';
const kube = (code: number, reason: string, message: string) => new KubeApiError('POST', PATH, code, { kind: 'Status', reason, message, code });

/** What must never reach a tenant: API paths, namespaces, service accounts, SQL, stacks, another tenant. */
const INTERNAL = [/\/apis\//, /namespace/i, /modeldock-lab/, /serviceaccount/, /SELECT|UPDATE|INSERT/, /\bat \S+ \(/, /globex/, /01OTHER/];
const expectNothingInternal = (text: string) => {
  for (const re of INTERNAL) expect(text).not.toMatch(re);
};

describe('shownError: what a tenant sees of an error on an outbox row', () => {
  it("the cluster's admission control refused: ClusterPolicy with the policy's message, not the policy's or the object's names", () => {
    const vap = kube(
      422,
      'Invalid',
      `modelservices.modeldock.io "md-01x" is invalid: : ValidatingAdmissionPolicy 'modeldock-deny' with binding 'modeldock-deny-binding' denied request: ModelService creates are refused`,
    );
    expect(shownError(vap)).toEqual({ code: 'ClusterPolicy', message: "the cluster's admission control refused the ModelService: ModelService creates are refused" });
    const webhook = kube(403, 'Forbidden', 'admission webhook "deny.example.com" denied the request: images from this registry are frozen');
    expect(shownError(webhook)).toEqual({ code: 'ClusterPolicy', message: "the cluster's admission control refused the ModelService: images from this registry are frozen" });
  });

  it('any other answer of the API server: ClusterError with the status code and reason only (no path, namespace or service account)', () => {
    const rbac = kube(
      403,
      'Forbidden',
      'modelservices.modeldock.io is forbidden: User "system:serviceaccount:modeldock-system:modeldock-controller" cannot create resource "modelservices" in API group "modeldock.io" in the namespace "modeldock-lab"',
    );
    expect(shownError(rbac)).toEqual({ code: 'ClusterError', message: 'the Kubernetes API answered 403 Forbidden' });
    expect(shownError(kube(500, 'InternalError', `Internal error occurred: ${PATH}`))).toEqual({ code: 'ClusterError', message: 'the Kubernetes API answered 500 InternalError' });
    expect(shownError(kube(502, 'bad gateway from 10.0.0.1', 'x'))).toEqual({ code: 'ClusterError', message: 'the Kubernetes API answered 502' });
  });

  it('the API server unreachable or too slow: ClusterUnreachable', () => {
    expect(shownError(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 10.96.0.1:443') })).code).toBe('ClusterUnreachable');
    expect(shownError(new DOMException('The operation was aborted due to timeout', 'TimeoutError')).code).toBe('ClusterUnreachable');
  });

  it('the ledger database down: LedgerUnavailable, without the statement', () => {
    const down = new DatabaseUnavailable("database unreachable: UPDATE outbox o SET o.last_error = ? WHERE o.tenant = 'globex'");
    expect(shownError(down)).toEqual({ code: 'LedgerUnavailable', message: 'the ledger database did not answer' });
  });

  it('a delivery that can never succeed: InvalidSpec without the schema error, ImagePolicy with the policy’s reason about the image', () => {
    const invalid = new TerminalError('InvalidSpec', 'the admitted spec is not a valid ModelService spec: [{"path":["replicas"],"message":"Too small"}]');
    expect(shownError(invalid)).toEqual({ code: 'InvalidSpec', message: 'the admitted spec is not a valid ModelService spec' });
    const image = new TerminalError('ImagePolicy', 'refused by the image policy at delivery: registry ghcr.io (ghcr.io/x/miner) is not allowed; allowed: registry.example.com');
    expect(shownError(image)).toEqual({ code: 'ImagePolicy', message: image.message });
    expect(shownError(new TerminalError('Other', 'SELECT 1'))).toMatchObject({ code: 'Internal' });
  });

  it('anything else (SQL refused, a bug with a stack): Internal, naming nothing of it', () => {
    const sql = new Error("target: modeldock.-.primary: vttablet: Data too long for column 'last_failure' at row 1 (errno 1406): UPDATE binding b SET b.last_failure = ?");
    const bug = new Error('boom');
    bug.stack = 'Error: boom\n    at step (/app/controller/reservation/step.ts:10:5)';
    for (const err of [sql, bug, 'a string', undefined]) {
      const shown = shownError(err);
      expect(shown.code).toBe('Internal');
      expectNothingInternal(lastErrorText(shown));
    }
  });

  it('every shown text is free of internal details, printable and bounded as stored', () => {
    const samples = [
      kube(422, 'Invalid', `denied request: ${'"\u001b[2J'.repeat(2000)}`),
      kube(403, 'Forbidden', 'User "system:serviceaccount:modeldock-system:x" cannot create in the namespace "modeldock-lab"'),
      new DatabaseUnavailable('SELECT * FROM reservation'),
      new Error(PATH),
    ];
    for (const err of samples) {
      const text = lastErrorText(shownError(err));
      expectNothingInternal(text);
      expect(printable(text)).toBe(text);
      expect(mysqlLength(text, 'characters')).toBeLessThanOrEqual(LAST_ERROR_MAX_CHARS);
    }
  });
});

describe('shownConflict', () => {
  const rec = { id: '01MINE', tenant: 'acme' };
  it("another admission's or another tenant's ModelService under the name: ForeignModelService, naming neither", () => {
    expect(shownConflict(rec, { admissionId: '01OTHER', tenant: 'acme' })).toEqual(SHOWN_FOREIGN);
    expect(shownConflict(rec, { admissionId: '01MINE', tenant: 'globex' })).toEqual(SHOWN_FOREIGN);
    expect(shownConflict(rec, { admissionId: undefined, tenant: undefined })).toEqual(SHOWN_FOREIGN);
    expect(shownConflict(rec, null)).toEqual(SHOWN_FOREIGN);
    expectNothingInternal(lastErrorText(SHOWN_FOREIGN));
  });
  it('ours, but not the one bound (another UID): ModelServiceReplaced', () => {
    expect(shownConflict(rec, { admissionId: '01MINE', tenant: 'acme' })).toMatchObject({ code: 'ModelServiceReplaced', message: expect.stringMatching(/UID/) });
  });
});

describe('the last_error writes store printable text within the bound, whatever they are given', () => {
  const given = `NeverReady: \u001b]0;x\u0007${'模'.repeat(3000)}`;
  const expectStored = (v: unknown) => {
    expect(typeof v).toBe('string');
    expect(printable(String(v))).toBe(v);
    expect(mysqlLength(String(v), 'characters')).toBe(LAST_ERROR_MAX_CHARS);
    expect(String(v)).toMatch(/^NeverReady: \]0;x模+$/);
  };
  it('transition (reservation.last_error)', async () => {
    const { db } = scriptedLedgerDb({ records: [] });
    const args: unknown[][] = [];
    await transition({ execute: (sql, a) => (args.push([...(a ?? [])]), db.execute(sql, a)) }, KEY, ['delivered'], 'releasing', EPOCH, NOW, given);
    expectStored(args[0]?.[4]);
  });
  it('fail (outbox.last_error)', async () => {
    const { db } = scriptedLedgerDb({ records: [] });
    const args: unknown[][] = [];
    await fail({ execute: (sql, a) => (args.push([...(a ?? [])]), db.execute(sql, a)) }, claimedRow(1, 'create'), given, { now: NOW, retryAt: NOW });
    expectStored(args[0]?.[1]);
  });
});
