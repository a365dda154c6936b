-- Issue 33, step 7 (docs/multi-cluster.md T7, "Failover move"): a lost cluster's running admissions
-- move to another cluster in one transaction on the tenant's shard; the tenant's charge moves with
-- them and is never doubled.
--
-- placement: the placements an admission has LEFT (the one it is on now is the reservation's
--   cluster, placement_seq and room_anchor). A move writes the row of the placement it leaves:
--   state 'stranded' (its room on the lost cluster stays taken: cluster_allotment.stranded_*, until
--   that cluster's controller, back, reports its pods gone, or an operator forgets the cluster),
--   later 'freed' or 'forgotten'. held_*: the room it holds there (the reservation's amounts when it
--   moved). So per allotment, stranded == Σ held of its stranded placements (the checker's
--   `cluster-stranded`).
-- quota_movement.placement_seq: a 'move' movement records where the charge went (cluster, note);
--   it changes no balance. Its key takes the placement it moved to, so an admission can move more
--   than once at one generation; every other movement keeps placement 1 (its key is unchanged).
CREATE TABLE IF NOT EXISTS placement (
  tenant VARCHAR(63) NOT NULL,
  reservation_id CHAR(26) NOT NULL,
  seq INT NOT NULL,
  cluster VARCHAR(63) NOT NULL,
  anchor VARCHAR(63) NOT NULL,
  state VARCHAR(16) NOT NULL,
  reason VARCHAR(255) NOT NULL,
  held_cpu_millis BIGINT NOT NULL,
  held_memory_mib BIGINT NOT NULL,
  held_gpu BIGINT NOT NULL,
  held_modelservices BIGINT NOT NULL,
  ended_at DATETIME(3) NOT NULL,
  freed_at DATETIME(3) NULL,
  freed_reason VARCHAR(255) NULL,
  PRIMARY KEY (tenant, reservation_id, seq),
  KEY ix_placement_cluster_state (cluster, state, tenant, reservation_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

ALTER TABLE quota_movement ADD COLUMN placement_seq INT NOT NULL DEFAULT 1;
ALTER TABLE quota_movement ADD COLUMN cluster VARCHAR(63) NULL;
ALTER TABLE quota_movement DROP PRIMARY KEY, ADD PRIMARY KEY (reservation_id, generation, direction, placement_seq);
