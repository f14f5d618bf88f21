-- The queue in PostgreSQL: the same tables as the SQLite file (src/queue/migrations), shared by every relay
-- that has the same SERVER_QUEUE_URL. Times are milliseconds since 1970 (BIGINT), as in SQLite.
-- Folders compare byte by byte (COLLATE "C"), as SQLite does: the folders below a folder are a range.
CREATE TABLE scans (
  id BIGSERIAL PRIMARY KEY,
  folder TEXT COLLATE "C" NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'done', 'failed')),
  priority INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL,
  event TEXT NOT NULL,
  title TEXT,
  ids TEXT,
  update_type TEXT NOT NULL DEFAULT 'Modified',
  requests INTEGER NOT NULL DEFAULT 1,
  upgrade INTEGER NOT NULL DEFAULT 0,
  first_at BIGINT NOT NULL,
  last_at BIGINT NOT NULL,
  due_at BIGINT NOT NULL,
  finished_at BIGINT,
  -- 1: a library root scan for removed items, kept apart from the scans of new files (one pending of each kind
  -- per folder); it waits for open scans of new files below it until hold_until at most.
  removal INTEGER NOT NULL DEFAULT 0,
  hold_until BIGINT
);
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder, removal) WHERE status = 'pending';
CREATE INDEX scans_by_status_due ON scans (status, due_at);

CREATE TABLE scan_files (
  scan_id BIGINT NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY (scan_id, path)
);

-- One row per (scan, target). A claim names the relay that took it and how long it holds it (lease_until):
-- a claim whose lease ran out (its relay died) is taken again by another relay.
CREATE TABLE deliveries (
  scan_id BIGINT NOT NULL,
  target TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('waiting', 'sending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at BIGINT NOT NULL,
  last_error TEXT,
  detail TEXT,
  finished_at BIGINT,
  file_checks INTEGER NOT NULL DEFAULT 0,
  priority INTEGER NOT NULL DEFAULT 0,
  relay TEXT,
  lease_until BIGINT,
  PRIMARY KEY (scan_id, target)
);
CREATE INDEX deliveries_claim_order ON deliveries (target, status, priority, next_at, scan_id);

CREATE TABLE scan_parts (
  scan_id BIGINT NOT NULL,
  folder TEXT COLLATE "C" NOT NULL,
  priority INTEGER NOT NULL,
  source TEXT NOT NULL,
  event TEXT NOT NULL,
  title TEXT,
  ids TEXT,
  update_type TEXT NOT NULL,
  upgrade INTEGER NOT NULL DEFAULT 0,
  requests INTEGER NOT NULL,
  first_at BIGINT NOT NULL,
  PRIMARY KEY (scan_id, folder)
);

CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT
);
