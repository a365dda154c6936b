-- Issue 12 (items 4–6).
-- Why a release is blocked: 'PodsStillPresent' (release_blocked_pods names them) or 'Finalizers'
-- (the ModelService stays in deletion with no pod left; release_blocked_finalizers names them,
-- JSON array of strings). Written by the controller with release_blocked_since, cleared on release.
ALTER TABLE reservation ADD COLUMN release_blocked_reason VARCHAR(32) NULL;
ALTER TABLE reservation ADD COLUMN release_blocked_finalizers TEXT NULL;
-- The periodic ledger resync pages open reservations by (last_reconciled_at, id).
ALTER TABLE reservation ADD KEY ix_reservation_reconciled (last_reconciled_at, id);
-- An operator's resolution of a conflict is audited as a movement of its own:
-- direction 'resolve-release' or 'resolve-keep' (the primary key still allows one of each),
-- with the operator's reason in `note`.
ALTER TABLE quota_movement MODIFY direction VARCHAR(16) NOT NULL;
ALTER TABLE quota_movement ADD COLUMN note TEXT NULL;
