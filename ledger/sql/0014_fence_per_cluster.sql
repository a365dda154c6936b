-- Issue 33, step 5 (docs/multi-cluster.md, "Fencing"): a controller per cluster. Each cluster's
-- controller serves only what is routed to its cluster and is fenced per (tenant, cluster), so the
-- controllers of two clusters never fence each other out.
--
-- tenant_fence.cluster: the fence row is per (tenant, cluster). A controller write joins the row of
--   the cluster the written row names (reservation.cluster, outbox.cluster, binding.cluster), at the
--   writer's epoch; epochs come from the one global counter (controller_epoch), so no two
--   leaderships share one, and a write on a row of another cluster matches no fence row.
-- binding.cluster: the cluster the CR was created on (the delivering controller's).
-- The claim and the resync scan by cluster: their indexes lead with it.
ALTER TABLE tenant_fence ADD COLUMN cluster VARCHAR(63) NOT NULL DEFAULT 'default';
ALTER TABLE tenant_fence DROP PRIMARY KEY, ADD PRIMARY KEY (tenant, cluster);
ALTER TABLE binding ADD COLUMN cluster VARCHAR(63) NOT NULL DEFAULT 'default';
ALTER TABLE outbox DROP INDEX ix_outbox_pending, ADD KEY ix_outbox_pending (cluster, done_at, dead_at, available_at);
ALTER TABLE reservation DROP INDEX ix_reservation_reconciled, ADD KEY ix_reservation_reconciled (cluster, last_reconciled_at, id);

-- Rows written before: a binding is on its reservation's cluster, and an undelivered row of a kind
-- other than create (they were written with the column default) goes to its reservation's cluster.
-- Each joins rows of one tenant, so it runs on each shard by itself.
/* per-shard */ UPDATE binding b JOIN reservation r ON r.tenant = b.tenant AND r.id = b.reservation_id SET b.cluster = r.cluster WHERE b.cluster <> r.cluster;
/* per-shard */ UPDATE outbox o JOIN reservation r ON r.tenant = o.tenant AND r.id = o.reservation_id SET o.cluster = r.cluster WHERE o.done_at IS NULL AND o.dead_at IS NULL AND o.cluster <> r.cluster;
