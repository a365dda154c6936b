-- Issue 14: where a slow start is stuck, in the tenant API. The controller copies what the
-- ModelService status observed onto the binding: the first pod bound to a node, the first
-- container running (set once, never moved), and the most recent pod failure (JSON of the CR
-- status' lastFailure: reason, message, pod, container, exitCode, at). deliveredAt is the
-- binding's created_at; readyAt its first_ready_at.
ALTER TABLE binding ADD COLUMN scheduled_at DATETIME(3) NULL;
ALTER TABLE binding ADD COLUMN started_at DATETIME(3) NULL;
ALTER TABLE binding ADD COLUMN last_failure VARCHAR(4096) NULL;
