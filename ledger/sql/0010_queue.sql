-- Issue 30: an admission may wait for quota instead of being refused (`onShortQuota: "queue"`).
--
-- A queued admission is a reservation in state `queued`: its amounts are what it will be charged
-- once admitted, and it has NO charge movement and NO outbox row until then. It leaves the queue
-- exactly once: to `admitted` (the dequeue: state, charge movement, outbox `create` row and the
-- tenant's usage in ONE transaction), to `cancelled` (DELETE) or to `expired` (its
-- queueTtlSeconds ran out); the last two are terminal and never charged.
--
-- queue_seq: the admission's place in its tenant's FIFO, taken from tenant_quota.queue_tail under
--   the tenant's quota-row locks, so a later arrival always sorts behind (ids from several Worker
--   isolates need not).
-- queue_expires_at: when it expires (NULL: never).
-- queue_bypassed: how many later admissions of its tenant were admitted past it while it was the
--   head (bounded by the tenant's max_bypass; then freed quota is held back for it).
-- queue_estimate_ms / queue_estimate_basis: the wait estimated when it was queued (kept to measure
--   the estimate's error against the real wait).
-- dequeued_at: when it left the queue (admitted, cancelled or expired).
ALTER TABLE reservation ADD COLUMN queue_seq BIGINT NULL;
ALTER TABLE reservation ADD COLUMN queue_expires_at DATETIME(3) NULL;
ALTER TABLE reservation ADD COLUMN queue_bypassed INT NOT NULL DEFAULT 0;
ALTER TABLE reservation ADD COLUMN queue_estimate_ms BIGINT NULL;
ALTER TABLE reservation ADD COLUMN dequeued_at DATETIME(3) NULL;

-- Per tenant, on every one of its quota rows (they are locked together by every charge):
-- queued: how many admissions the tenant has queued. A plain admission (or a replica increase)
--   charges only `WHERE … AND queued = 0`, so nothing passes a waiting queue except the dequeue.
-- queue_tail: the last queue_seq handed out (never decreases).
ALTER TABLE tenant_quota ADD COLUMN queued INT NOT NULL DEFAULT 0;
ALTER TABLE tenant_quota ADD COLUMN queue_tail BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tenant_quota ADD COLUMN queue_max_bypass INT NOT NULL DEFAULT 3;

-- A tenant's queue in FIFO order, and the per-shard list of tenants with a queue.
ALTER TABLE reservation ADD KEY ix_reservation_queue (state, tenant, queue_seq);
