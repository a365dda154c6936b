-- The count quota: every admission is charged 1 `modelservices` (whatever its replicas), all or
-- nothing with its cpu, memory and GPUs, and released exactly once with them. Admissions made
-- before this migration were charged 0 and keep 0 (so the ledger stays balanced).
--
-- Upgrading: a tenant without a `modelservices` row can admit nothing. After this migration run
-- `npm run tenant -- backfill-count` once: it gives every tenant that has a quota but no count
-- limit the default (MODELDOCK_DEFAULT_MODELSERVICES, 20), one tenant per statement. (An
-- INSERT … SELECT over all tenants here would be a cross-shard transaction on a keyspace
-- sharded by tenant, which Vitess refuses.)
ALTER TABLE reservation ADD COLUMN modelservices BIGINT NOT NULL DEFAULT 0;
ALTER TABLE quota_movement ADD COLUMN modelservices BIGINT NOT NULL DEFAULT 0;
