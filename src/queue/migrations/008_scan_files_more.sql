-- A scan keeps a bounded sample of the files its requests named (scan_files, at most MAX_FILES_PER_SCAN),
-- and counts here the names that did not fit: 50 webhooks of 20,000 files each once gave one scan a million
-- rows, which every read of the queue then loaded.
ALTER TABLE scans ADD COLUMN files_more INTEGER NOT NULL DEFAULT 0;
