-- File-exists checks a target has made for a delivery (plex_autoscan's SERVER_MAX_FILE_CHECKS). Kept apart
-- from `attempts` so a media server that is down does not use up the checks, and durable so a restart
-- does not start the count over.
ALTER TABLE deliveries ADD COLUMN file_checks INTEGER NOT NULL DEFAULT 0;
