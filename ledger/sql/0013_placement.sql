-- Issue 33, step 4 (docs/multi-cluster.md): placement in the charging transaction. Every charged
-- admission names the one cluster it was placed on; its charge is also reserved on that cluster's
-- allotment on the tenant's shard (cluster_allotment, migration 0012), in the same transaction.
--
-- reservation.cluster: the cluster the admission is placed on ('default' while no cluster is
--   registered: the single unregistered cluster of every install before issue 33; a queued
--   admission keeps 'default' until the dequeue places it). placement_seq: 1 at admission; the
--   failover (step 7) moves an admission to seq + 1. room_anchor: the anchor (ledger/anchors.ts) whose
--   allotment row holds the admission's room, so a release or refund gives it back exactly where it
--   was reserved; NULL: nothing was reserved (the unregistered cluster, or never charged).
-- outbox.cluster: the cluster whose controller delivers the row (claimed per cluster from step 5).
-- tenant_affinity: the tenant's preferred clusters, best rank first, for the `affinity` placement
--   policy (ledger/placement-policy.ts); written by `npm run tenant -- affinity`.
ALTER TABLE reservation ADD COLUMN cluster VARCHAR(63) NOT NULL DEFAULT 'default';
ALTER TABLE reservation ADD COLUMN placement_seq INT NOT NULL DEFAULT 1;
ALTER TABLE reservation ADD COLUMN room_anchor VARCHAR(63) NULL;
ALTER TABLE outbox ADD COLUMN cluster VARCHAR(63) NOT NULL DEFAULT 'default';

CREATE TABLE IF NOT EXISTS tenant_affinity (
  tenant VARCHAR(63) NOT NULL,
  cluster VARCHAR(63) NOT NULL,
  `rank` INT NOT NULL,
  PRIMARY KEY (tenant, cluster)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
