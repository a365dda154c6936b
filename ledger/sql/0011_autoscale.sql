-- Issue 31: autoscaling on the pods' load. The spec is part of the admission's spec
-- (reservation.spec.autoscale, changed like replicas through a new generation); the controller's
-- autoscaler charges every scale-up through the same transaction as a PATCH (ledger/autoscale-change.ts).
--
-- autoscale_status: what the autoscaler last decided and why, for the tenant (JSON,
--   schema/autoscale.ts autoscaleStatusSchema): desired replicas, the load it saw, panic mode, the
--   last committed change with its reason, and the conditions QuotaLimited / MetricsUnavailable /
--   Panic. Written only by the controller's autoscaler (fenced), only when it changed.
ALTER TABLE reservation ADD COLUMN autoscale_status TEXT NULL;
