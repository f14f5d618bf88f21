-- 1 for a library root scan that stands for removed items (a movie or series folder deleted or renamed away:
-- Plex drops such items only when a folder above them that exists is scanned). It is kept apart from the
-- scans of new files: it never takes them in nor merges into them, so one pending folder may hold one scan
-- of each kind.
ALTER TABLE scans ADD COLUMN removal INTEGER NOT NULL DEFAULT 0;
DROP INDEX scans_one_pending_per_folder;
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder, removal) WHERE status = 'pending';
-- A due removal scan waits while scans of new files at or below its folder are open, until this time at most.
ALTER TABLE scans ADD COLUMN hold_until INTEGER;
