import { describe, expect, it } from 'vitest';
import { AckGroups } from './ack-group.ts';
import { ClaimLost, type ClaimedRow } from './outbox-store.ts';
import type { DeliveryAck } from './transitions.ts';

const delivery = (seq: number, claim = 'ctl/a'): DeliveryAck => ({
  row: { seq, tenant: 't', reservationId: `r${seq}`, kind: 'create', attempts: 0, requestId: null, claim: { cluster: 'default', by: claim, until: new Date(0), epoch: 1, shard: '' } } satisfies ClaimedRow,
  cr: { namespace: 'ns', name: `md-r${seq}`, uid: `u${seq}` },
});

/** A transaction that completes only when the test says so: what was committed, how, and in what groups. */
function ledger(o: { groupAnswer?: () => Promise<boolean>; lost?: Set<number> } = {}) {
  const commits: string[] = [];
  const gates: Array<() => void> = [];
  const gate = () => new Promise<void>((resolve) => gates.push(resolve));
  const groups = new AckGroups({
    one: async (a) => {
      await gate();
      if (o.lost?.has(a.row.seq)) throw new ClaimLost(a.row.seq);
      commits.push(`one ${a.row.seq}`);
    },
    group: async (acks) => {
      await gate();
      const all = o.groupAnswer ? await o.groupAnswer() : true;
      if (all) commits.push(`group ${acks.map((a) => a.row.seq).join(',')}`);
      return all;
    },
    maxGroup: 3,
    onGroup: (n) => commits.push(`size ${n}`),
  });
  /** Lets every transaction in flight finish. */
  const open = async () => {
    for (let i = 0; i < 20 && gates.length > 0; i++) {
      gates.splice(0).forEach((g) => g());
      await new Promise((r) => setImmediate(r));
    }
  };
  return { groups, commits, open, inFlight: () => gates.length };
}

describe('AckGroups: group commit of one claim\'s delivery acknowledgements', () => {
  it('the first acknowledgement commits alone at once; those arriving during its commit go together in one transaction', async () => {
    const l = ledger();
    const first = l.groups.ack(delivery(1));
    await new Promise((r) => setImmediate(r));
    expect(l.inFlight()).toBe(1); // not waiting for company
    const later = [2, 3].map((s) => l.groups.ack(delivery(s)));
    await l.open();
    await Promise.all([first, ...later]);
    expect(l.commits).toEqual(['one 1', 'group 2,3', 'size 2']);
    expect(l.groups.pending).toBe(0);
  });

  it('at most maxGroup per transaction; other claims never join a group', async () => {
    const l = ledger();
    const all = [l.groups.ack(delivery(1)), ...[2, 3, 4, 5].map((s) => l.groups.ack(delivery(s))), l.groups.ack(delivery(9, 'ctl/b'))];
    await l.open();
    await Promise.all(all);
    expect(l.commits).toEqual(['one 1', 'one 9', 'group 2,3,4', 'size 3', 'one 5']);
  });

  it('a group with a lost claim writes nothing: each is then acknowledged alone and gets its own outcome', async () => {
    const l = ledger({ groupAnswer: async () => false, lost: new Set([3]) });
    const first = l.groups.ack(delivery(1));
    const two = l.groups.ack(delivery(2));
    const three = l.groups.ack(delivery(3));
    const settled = Promise.allSettled([first, two, three]);
    await l.open();
    const outcomes = await settled;
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(ClaimLost);
    expect(l.commits).toEqual(['one 1', 'one 2']);
  });

  it('a group that fails as a whole fails each of its deliveries with that error', async () => {
    const down = new Error('database unavailable');
    const l = ledger({ groupAnswer: async () => Promise.reject(down) });
    const first = l.groups.ack(delivery(1));
    const rest = Promise.allSettled([2, 3].map((s) => l.groups.ack(delivery(s))));
    await l.open();
    await first;
    expect((await rest).map((o) => (o.status === 'rejected' ? o.reason : 'ok'))).toEqual([down, down]);
    expect(l.groups.pending).toBe(0);
  });
});
