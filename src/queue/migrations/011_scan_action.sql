-- What a scan asks its targets to do (issue 39 item 5): NULL for a scan, 'refresh' or 'analyze' of the items at
-- its files. Scans of different actions are kept apart like different routes: a refresh never merges into a scan
-- of the same folder (the scan would find nothing new in a file changed in place).
ALTER TABLE scans ADD COLUMN action TEXT;
DROP INDEX scans_one_pending_per_folder;
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder, removal, coalesce(targets, ''), coalesce(action, '')) WHERE status = 'pending';
