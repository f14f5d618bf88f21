-- The outbox (NOTIFICATIONS, the dashboard's event stream): one row per event, written in the same transaction as
-- the delivery state change it tells of. Ids come from a sequence and only grow: a reader's cursor stays right.
CREATE TABLE events (
  id BIGSERIAL PRIMARY KEY,
  kind TEXT NOT NULL,
  at BIGINT NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX events_by_at ON events (at);

-- How far each notification destination has sent, and which relay sends for it until when (lease_until): on a
-- shared queue one relay at a time sends a destination's events, so each goes once.
CREATE TABLE event_cursors (
  destination TEXT PRIMARY KEY,
  last_id BIGINT NOT NULL,
  relay TEXT,
  lease_until BIGINT
);
