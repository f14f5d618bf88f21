-- 1 when any request merged into the scan was an upgrade: plex_autoscan empties the trash after an upgrade
-- even when nothing is deleted, and a later plain request for the same folder must not undo that.
ALTER TABLE scans ADD COLUMN upgrade INTEGER NOT NULL DEFAULT 0;
UPDATE scans SET upgrade = 1 WHERE event LIKE '%upgrade%';
