-- The targets a scan goes to (issue 39), as the SQLite store keeps them (its migration 011): the names joined by
-- ","; NULL for every target. Scans with different routes are kept apart.
ALTER TABLE scans ADD COLUMN targets TEXT;
DROP INDEX scans_one_pending_per_folder;
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder, removal, coalesce(targets, '')) WHERE status = 'pending';
