-- Issue 14: a tenant changes the replicas of an admission through the ledger (PATCH /requests/:id).
--
-- Every accepted change is a new GENERATION of its admission (the admission itself is generation
-- 1). The Worker writes `generation` with the change (and, for an increase, the charge); the
-- controller moves `applied_generation` once the ModelService carries the change's replicas, and
-- `settled_generation` once nothing more is owed: at once for an increase, after the refund for a
-- decrease (which waits until the surplus pods are gone). A change is pending while
-- settled_generation < generation; a tenant has at most one pending change per admission.
ALTER TABLE reservation ADD COLUMN generation BIGINT NOT NULL DEFAULT 1;
ALTER TABLE reservation ADD COLUMN applied_generation BIGINT NOT NULL DEFAULT 1;
ALTER TABLE reservation ADD COLUMN settled_generation BIGINT NOT NULL DEFAULT 1;

-- Each change exactly once: a movement per (admission, generation, direction). direction 'charge'
-- (generation 1: the admission; later: an increase's delta), 'refund' (a decrease's delta, after
-- its pods are gone), 'release' and the operator's 'resolve-*' (at the generation current then).
ALTER TABLE quota_movement ADD COLUMN generation BIGINT NOT NULL DEFAULT 1;
ALTER TABLE quota_movement DROP PRIMARY KEY, ADD PRIMARY KEY (reservation_id, generation, direction);

-- The changes a tenant asked for, one row per generation (>= 2): what it changed and the
-- Idempotency-Key it came with (a retry with the same key finds it; the key is per admission).
-- Written once, by the Worker, in the transaction that moves reservation.generation.
CREATE TABLE IF NOT EXISTS reservation_change (
  tenant VARCHAR(63) NOT NULL,
  reservation_id CHAR(26) NOT NULL,
  generation BIGINT NOT NULL,
  idempotency_key VARCHAR(255) NOT NULL,
  request_hash CHAR(64) NOT NULL,
  from_replicas INT NOT NULL,
  to_replicas INT NOT NULL,
  request_id VARCHAR(128) NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (tenant, reservation_id, generation),
  UNIQUE KEY uq_reservation_change_idempotency (tenant, reservation_id, idempotency_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
