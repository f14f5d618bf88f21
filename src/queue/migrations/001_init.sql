-- One row per scan of one folder. While 'pending', new requests for the folder (or a folder below it)
-- merge into the row; once 'active' it is being delivered and new requests start a new row.
CREATE TABLE scans (
  id INTEGER PRIMARY KEY,
  folder TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'done', 'failed')),
  priority INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL,
  event TEXT NOT NULL,
  title TEXT,
  ids TEXT,
  update_type TEXT NOT NULL DEFAULT 'Modified',
  requests INTEGER NOT NULL DEFAULT 1,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  due_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder) WHERE status = 'pending';
CREATE INDEX scans_by_status_due ON scans (status, due_at);

-- The files whose requests the scan stands for (analyze and file checks need them).
CREATE TABLE scan_files (
  scan_id INTEGER NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY (scan_id, path)
) WITHOUT ROWID;

-- One row per (scan, target): each target has its own delivery state, retries and outcome.
CREATE TABLE deliveries (
  scan_id INTEGER NOT NULL,
  target TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('waiting', 'sending', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  last_error TEXT,
  detail TEXT,
  finished_at INTEGER,
  PRIMARY KEY (scan_id, target)
) WITHOUT ROWID;
CREATE INDEX deliveries_by_status_next ON deliveries (status, next_at);

-- Small durable settings other parts keep beside the queue (the drive page token, ...).
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT
);
