-- Folders below a new folder are found with a range on `folder` among pending scans. Without this index
-- SQLite used (status, due_at) and read every pending scan for each new folder: quadratic with a backlog.
CREATE INDEX scans_by_status_folder ON scans (status, folder);

-- Due deliveries are claimed highest priority first. Keeping the scan's priority on the delivery lets an
-- index hand them out in order, instead of sorting every due delivery at each claim during a large drain.
ALTER TABLE deliveries ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
UPDATE deliveries SET priority = (SELECT priority FROM scans WHERE scans.id = deliveries.scan_id);
CREATE INDEX deliveries_claim_order ON deliveries (status, priority DESC, next_at, scan_id);
