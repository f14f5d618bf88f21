-- The targets a scan goes to (issue 39): decided once when it is queued (queue/route.ts) and kept here, the
-- names joined by ","; NULL for every target, as every scan went before. Scans with different routes are kept
-- apart, so one pending folder may hold one scan per route and kind.
ALTER TABLE scans ADD COLUMN targets TEXT;
DROP INDEX scans_one_pending_per_folder;
CREATE UNIQUE INDEX scans_one_pending_per_folder ON scans (folder, removal, coalesce(targets, '')) WHERE status = 'pending';
