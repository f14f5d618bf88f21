-- The outbox (NOTIFICATIONS, the dashboard's event stream): one row per event, written in the same transaction as
-- the delivery state change it tells of. AUTOINCREMENT: an id is never handed out twice, so a reader's cursor
-- (the last id it sent) stays right after old rows are pruned.
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  at INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX events_by_at ON events (at);

-- How far each notification destination has sent (last_id), and which relay sends for it until when (a queue
-- shared in PostgreSQL; one process owns a SQLite file).
CREATE TABLE event_cursors (
  destination TEXT PRIMARY KEY,
  last_id INTEGER NOT NULL,
  relay TEXT,
  lease_until INTEGER
);
