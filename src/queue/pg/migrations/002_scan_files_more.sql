-- A scan keeps a bounded sample of the files its requests named (scan_files, at most MAX_FILES_PER_SCAN) and
-- counts here the names that did not fit, as the SQLite store does (its migration 008).
ALTER TABLE scans ADD COLUMN files_more INTEGER NOT NULL DEFAULT 0;
