-- Reads whose cost follows what is open, not everything a tenant ever admitted. Apply before
-- deploying the Worker that names this index (functions/db/quota.ts, functions/db/scheduled-runs.ts
-- read through it with FORCE INDEX).
--
-- (state, tenant, id): GET /quota's breakdown reads ONE tenant's reservations in the states it sums
-- (state IN (…) AND tenant = ?: one range per state, `released` never among them), and the cron
-- sweep pages the open states of a shard in (state, tenant, id) order from its cursor — neither
-- ever reads a released reservation, however many there are.
ALTER TABLE reservation ADD KEY ix_reservation_state_tenant (state, tenant, id);

-- A PATCH that asks for the replicas an admission already has changes nothing, but its
-- Idempotency-Key is bound to its body all the same: it is recorded as a change row at generation 0
-- (from_replicas = to_replicas), which no reservation's generation (≥ 1) ever joins. A retry with
-- the same key and body replays the answer; the same key with another body is refused (422), as a
-- real change's key is. Several such rows per admission (each with its own key) need the key in the
-- primary key; uq_reservation_change_idempotency (tenant, reservation_id, idempotency_key) still
-- binds one key once. One real change per generation is kept by the transaction that writes it:
-- it first moves the reservation from generation g to g + 1 with a guarded UPDATE, which only one
-- transaction can do.
ALTER TABLE reservation_change DROP PRIMARY KEY, ADD PRIMARY KEY (tenant, reservation_id, generation, idempotency_key);
