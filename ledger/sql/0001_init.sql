-- ModelDock ledger, version 1. Applied by `npm run migrate` (scripts/migrate.ts), which records
-- applied versions in schema_migrations. Migrations are append-only: never edit an applied file,
-- add 0002_….sql instead (the runner refuses a changed checksum).
--
-- Portable subset accepted by MySQL 8 / PlanetScale and MariaDB 10.11: no foreign keys, no
-- ENUM, no CHECK, no generated columns, no SKIP LOCKED; every table has a primary key; times
-- are DATETIME(3) in UTC, always written from values the caller passes (or UTC_TIMESTAMP(3)).
-- Identifiers and keys compare byte-wise (utf8mb4_bin): "Key" and "key" are different keys.

-- Per-tenant, per-resource budget. resource: 'cpu' (millicores), 'memory' (MiB),
-- 'nvidia.com/gpu' (count). A missing row means a quota of 0.
CREATE TABLE IF NOT EXISTS tenant_quota (
  tenant VARCHAR(63) NOT NULL,
  resource VARCHAR(32) NOT NULL,
  hard BIGINT NOT NULL,
  used BIGINT NOT NULL DEFAULT 0,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (tenant, resource)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per admission. state: admitted | delivered | ready | deleting | releasing |
-- released | conflict. Amounts are TOTALS (per replica × replicas).
CREATE TABLE IF NOT EXISTS reservation (
  id CHAR(26) NOT NULL,
  tenant VARCHAR(63) NOT NULL,
  idempotency_key VARCHAR(255) NOT NULL,
  request_hash CHAR(64) NOT NULL,
  name VARCHAR(63) NOT NULL,
  spec JSON NOT NULL,
  cpu_millis BIGINT NOT NULL,
  memory_mib BIGINT NOT NULL,
  gpu BIGINT NOT NULL,
  state VARCHAR(16) NOT NULL,
  request_id VARCHAR(128) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  state_changed_at DATETIME(3) NOT NULL,
  delete_requested_at DATETIME(3) NULL,
  release_blocked_since DATETIME(3) NULL,
  last_error TEXT NULL,
  dead_at DATETIME(3) NULL,
  last_reconciled_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_reservation_idempotency (tenant, idempotency_key),
  KEY ix_reservation_tenant_id (tenant, id),
  KEY ix_reservation_state (state, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The CR identity actually created for a reservation (written by the controller).
CREATE TABLE IF NOT EXISTS binding (
  reservation_id CHAR(26) NOT NULL,
  namespace VARCHAR(63) NOT NULL,
  cr_name VARCHAR(253) NOT NULL,
  uid VARCHAR(64) NULL,
  ever_ready TINYINT(1) NOT NULL DEFAULT 0,
  first_ready_at DATETIME(3) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (reservation_id),
  UNIQUE KEY uq_binding_cr (namespace, cr_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Work for the controller. kind: create | delete | reconcile. dedupe_key is UNIQUE (NULLs
-- allowed): 'create:<id>' and 'delete:<id>' exist at most once per reservation;
-- 'reconcile:<id>:pending' exists at most once while pending — whoever completes (or kills)
-- a reconcile row sets its dedupe_key to NULL, so the next sweep can enqueue a new one.
CREATE TABLE IF NOT EXISTS outbox (
  seq BIGINT NOT NULL AUTO_INCREMENT,
  reservation_id CHAR(26) NOT NULL,
  kind VARCHAR(16) NOT NULL,
  available_at DATETIME(3) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  claimed_by VARCHAR(128) NULL,
  claimed_until DATETIME(3) NULL,
  epoch BIGINT NULL,
  done_at DATETIME(3) NULL,
  dead_at DATETIME(3) NULL,
  last_error TEXT NULL,
  dedupe_key VARCHAR(128) NULL,
  request_id VARCHAR(128) NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (seq),
  UNIQUE KEY uq_outbox_dedupe (dedupe_key),
  KEY ix_outbox_pending (done_at, dead_at, available_at),
  KEY ix_outbox_reservation (reservation_id, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every charge and release, at most once each per reservation (the primary key is the
-- UNIQUE (reservation_id, direction) that refuses a second charge or a second release).
-- direction: charge | release.
CREATE TABLE IF NOT EXISTS quota_movement (
  reservation_id CHAR(26) NOT NULL,
  direction VARCHAR(8) NOT NULL,
  tenant VARCHAR(63) NOT NULL,
  cpu_millis BIGINT NOT NULL,
  memory_mib BIGINT NOT NULL,
  gpu BIGINT NOT NULL,
  at DATETIME(3) NOT NULL,
  PRIMARY KEY (reservation_id, direction),
  KEY ix_quota_movement_tenant (tenant, at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Fencing token of the leader controller: bumped on each acquisition.
CREATE TABLE IF NOT EXISTS controller_epoch (
  id INT NOT NULL,
  epoch BIGINT NOT NULL,
  holder VARCHAR(253) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

INSERT IGNORE INTO controller_epoch (id, epoch, holder, updated_at) VALUES (1, 0, '', UTC_TIMESTAMP(3));

-- Single-flight of the Worker's scheduled() per (cron, scheduledTime): the first run inserts
-- the row and holds a lease; a retry of a finished run does nothing; a retry after the lease
-- expired (the first run died) takes over.
CREATE TABLE IF NOT EXISTS scheduled_run (
  cron VARCHAR(64) NOT NULL,
  scheduled_ms BIGINT NOT NULL,
  holder VARCHAR(64) NOT NULL,
  lease_until DATETIME(3) NOT NULL,
  started_at DATETIME(3) NOT NULL,
  finished_at DATETIME(3) NULL,
  statements INT NOT NULL DEFAULT 0,
  enqueued INT NOT NULL DEFAULT 0,
  PRIMARY KEY (cron, scheduled_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
