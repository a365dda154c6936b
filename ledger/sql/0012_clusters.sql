-- Issue 33, step 2 (docs/multi-cluster.md): clusters in the ledger. Each cluster's capacity is held
-- in escrow: what is not yet allotted sits in `cluster.pool_*` (global keyspace); each ledger shard
-- holds an allotment of it in `cluster_allotment` (sharded by the shard's anchor, ledger/anchors.ts),
-- so that the charging transaction can check and reserve room on its own shard. Capacity moves
-- between the pool and an allotment only through the two-step saga of ledger/allotment-moves.ts
-- (an intent in `allotment_move`, applied once per shard under `allotment_log`'s primary key).
-- Amount columns follow ledger/resources.ts (<prefix>_cpu_millis, _memory_mib, _gpu, _modelservices).
-- The columns placement needs on reservation, outbox, binding and tenant_fence come with the steps
-- that use them (a later migration).

-- One row per cluster (global). state: joining (added, no controller has taken it yet) | ready |
-- draining | lost | forgotten. `version` counts state changes: allotment rows follow it
-- (cluster_allotment.mode_version), so a shard's mode can never go back to an older state's.
CREATE TABLE IF NOT EXISTS cluster (
  name VARCHAR(63) NOT NULL,
  state VARCHAR(16) NOT NULL,
  version INT NOT NULL,
  epoch BIGINT NOT NULL DEFAULT 0,
  holder VARCHAR(255) NULL,
  lease_ms INT NOT NULL,
  heartbeat_at DATETIME(3) NULL,
  heartbeat_by VARCHAR(255) NULL,
  capacity_cpu_millis BIGINT NOT NULL,
  capacity_memory_mib BIGINT NOT NULL,
  capacity_gpu BIGINT NOT NULL,
  capacity_modelservices BIGINT NOT NULL,
  pool_cpu_millis BIGINT NOT NULL,
  pool_memory_mib BIGINT NOT NULL,
  pool_gpu BIGINT NOT NULL,
  pool_modelservices BIGINT NOT NULL,
  admit_share_max DOUBLE NULL,
  gateway_url VARCHAR(255) NULL,
  state_changed_at DATETIME(3) NOT NULL,
  lost_at DATETIME(3) NULL,
  forget_done_at DATETIME(3) NULL,
  created_at DATETIME(3) NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Every operator action on a cluster and every state change, written in the transaction that makes it (global).
CREATE TABLE IF NOT EXISTS cluster_audit (
  seq BIGINT NOT NULL AUTO_INCREMENT,
  cluster VARCHAR(63) NOT NULL,
  action VARCHAR(16) NOT NULL,
  actor VARCHAR(255) NOT NULL,
  reason VARCHAR(1024) NULL,
  epoch BIGINT NOT NULL,
  detail TEXT NULL,
  at DATETIME(3) NOT NULL,
  PRIMARY KEY (seq),
  KEY ix_cluster_audit_cluster (cluster, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The intent of one capacity move between a cluster's pool and one anchor's allotment (global).
-- direction: grant (pool → anchor) | reclaim (anchor → pool); state: pending | done.
CREATE TABLE IF NOT EXISTS allotment_move (
  id VARCHAR(128) NOT NULL,
  cluster VARCHAR(63) NOT NULL,
  anchor VARCHAR(63) NOT NULL,
  direction VARCHAR(8) NOT NULL,
  want_cpu_millis BIGINT NOT NULL,
  want_memory_mib BIGINT NOT NULL,
  want_gpu BIGINT NOT NULL,
  want_modelservices BIGINT NOT NULL,
  state VARCHAR(8) NOT NULL,
  by_holder VARCHAR(255) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  done_at DATETIME(3) NULL,
  PRIMARY KEY (id),
  KEY ix_allotment_move_state (state, created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One shard's allotment of one cluster (sharded: the `tenant` vindex on `anchor`). The invariant
-- reserved + stranded <= allotted holds per resource. mode: closed (joining) | open | draining |
-- lost | forgotten, the cluster's state as of its `mode_version`.
CREATE TABLE IF NOT EXISTS cluster_allotment (
  anchor VARCHAR(63) NOT NULL,
  cluster VARCHAR(63) NOT NULL,
  allotted_cpu_millis BIGINT NOT NULL DEFAULT 0,
  allotted_memory_mib BIGINT NOT NULL DEFAULT 0,
  allotted_gpu BIGINT NOT NULL DEFAULT 0,
  allotted_modelservices BIGINT NOT NULL DEFAULT 0,
  reserved_cpu_millis BIGINT NOT NULL DEFAULT 0,
  reserved_memory_mib BIGINT NOT NULL DEFAULT 0,
  reserved_gpu BIGINT NOT NULL DEFAULT 0,
  reserved_modelservices BIGINT NOT NULL DEFAULT 0,
  stranded_cpu_millis BIGINT NOT NULL DEFAULT 0,
  stranded_memory_mib BIGINT NOT NULL DEFAULT 0,
  stranded_gpu BIGINT NOT NULL DEFAULT 0,
  stranded_modelservices BIGINT NOT NULL DEFAULT 0,
  mode VARCHAR(16) NOT NULL,
  mode_version INT NOT NULL,
  updated_at DATETIME(3) NOT NULL,
  PRIMARY KEY (anchor, cluster)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A move applied on the anchor's shard, once: its primary key makes a second application fail
-- (sharded on `anchor`, like cluster_allotment). applied_* is what the step moved.
CREATE TABLE IF NOT EXISTS allotment_log (
  anchor VARCHAR(63) NOT NULL,
  move_id VARCHAR(128) NOT NULL,
  cluster VARCHAR(63) NOT NULL,
  applied_cpu_millis BIGINT NOT NULL,
  applied_memory_mib BIGINT NOT NULL,
  applied_gpu BIGINT NOT NULL,
  applied_modelservices BIGINT NOT NULL,
  at DATETIME(3) NOT NULL,
  PRIMARY KEY (anchor, move_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
