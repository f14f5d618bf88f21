-- The requests a scan stands for that were for other folders: pending scans it absorbed (a folder above
-- them), and requests for folders below it that merged in. When the scan fails for good, each part is queued
-- again on its own, so no request is lost because another one took it in. Deleted when the scan finishes.
CREATE TABLE scan_parts (
  scan_id INTEGER NOT NULL,
  folder TEXT NOT NULL,
  priority INTEGER NOT NULL,
  source TEXT NOT NULL,
  event TEXT NOT NULL,
  title TEXT,
  ids TEXT,
  update_type TEXT NOT NULL,
  upgrade INTEGER NOT NULL DEFAULT 0,
  requests INTEGER NOT NULL,
  first_at INTEGER NOT NULL,
  PRIMARY KEY (scan_id, folder)
) WITHOUT ROWID;
