-- Issue 13: the ledger sharded by tenant (Vitess / PlanetScale). Every row a statement must find
-- carries the tenant, the sharding key: outbox and binding get a `tenant` column (backfilled from
-- their reservation), and the controller's fence moves next to the rows it guards.
--
-- Order on PlanetScale: apply this on the UNSHARDED database first (the backfill joins outbox and
-- binding to reservation by id, which only an unsharded keyspace can do), then move the tables to
-- the sharded keyspace (docs/planetscale.md). On a sharded keyspace the runner skips the two
-- UPDATEs (marked unsharded-only, ledger/migrate.ts): there is nothing to backfill, since vtgate
-- never accepted an outbox or binding row without its tenant.
ALTER TABLE outbox ADD COLUMN tenant VARCHAR(63) NOT NULL DEFAULT '';
ALTER TABLE binding ADD COLUMN tenant VARCHAR(63) NOT NULL DEFAULT '';
UPDATE /* unsharded-only */ outbox SET tenant = (SELECT r.tenant FROM reservation r WHERE r.id = outbox.reservation_id) WHERE tenant = '';
UPDATE /* unsharded-only */ binding SET tenant = (SELECT r.tenant FROM reservation r WHERE r.id = binding.reservation_id) WHERE tenant = '';
-- Lookups by (tenant, reservation): GET /requests/:id's outbox columns, the sweep's live-row test.
ALTER TABLE outbox ADD KEY ix_outbox_tenant_reservation (tenant, reservation_id, seq);
ALTER TABLE binding ADD KEY ix_binding_tenant (tenant, reservation_id);

-- The controller's fence, one row per tenant, on the tenant's shard (docs/design.md, "Fencing").
-- Every controller write joins its tenant's row on `epoch = <the writer's epoch>`; a new leader
-- raises every row to its epoch when it takes over (per shard) and creates the row of a tenant it
-- meets first. controller_epoch stays the source of the epoch numbers (the global keyspace).
CREATE TABLE IF NOT EXISTS tenant_fence (
  tenant VARCHAR(63) NOT NULL,
  epoch BIGINT NOT NULL,
  holder VARCHAR(253) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (tenant)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
