-- What a scan asks its targets to do (issue 39 item 5), as the SQLite store keeps it (its migration 013): NULL for
-- a scan, 'refresh' or 'analyze'. Scans of different actions are kept apart.
ALTER TABLE scans ADD COLUMN action TEXT;
DROP INDEX scans_one_pending_per_folder;
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder, removal, coalesce(targets, ''), coalesce(action, '')) WHERE status = 'pending';
