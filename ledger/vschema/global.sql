-- Vitess only (applied after the migrations, through vtgate): the sequence behind outbox.seq.
-- In a sharded keyspace AUTO_INCREMENT would hand out the same seq on every shard, so
-- ledger.json names this table as outbox's auto_increment source; vtgate reserves `cache` ids
-- at a time. When an existing unsharded ledger is moved to shards, set next_id above the
-- highest outbox.seq first.
CREATE TABLE IF NOT EXISTS outbox_seq (
  id INT NOT NULL,
  next_id BIGINT NOT NULL,
  cache BIGINT NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB COMMENT 'vitess_sequence';

INSERT IGNORE INTO outbox_seq (id, next_id, cache) VALUES (0, 1, 1000);
