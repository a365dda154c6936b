-- The names of the pods that keep a release blocked (JSON array of strings), written by the
-- controller together with release_blocked_since, shown by GET /requests/:id.
ALTER TABLE reservation ADD COLUMN release_blocked_pods TEXT NULL;
