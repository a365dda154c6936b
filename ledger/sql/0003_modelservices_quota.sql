-- The count quota: every admission is charged 1 `modelservices` (whatever its replicas), all or
-- nothing with its cpu, memory and GPUs, and released exactly once with them. Admissions made
-- before this migration were charged 0 and keep 0 (so the ledger stays balanced).
ALTER TABLE reservation ADD COLUMN modelservices BIGINT NOT NULL DEFAULT 0;
ALTER TABLE quota_movement ADD COLUMN modelservices BIGINT NOT NULL DEFAULT 0;

-- Every tenant that already has a quota gets the default count limit (20); `npm run tenant --
-- set <tenant> modelservices=N` changes it. A tenant without a row cannot admit anything.
INSERT IGNORE INTO tenant_quota (tenant, resource, hard, used, updated_at)
  SELECT DISTINCT tenant, 'modelservices', 20, 0, UTC_TIMESTAMP(3) FROM tenant_quota;
