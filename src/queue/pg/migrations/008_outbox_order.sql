-- Outbox ids come from a sequence, and transactions on different connections commit out of id order: a reader that
-- moved past id 12 would never see id 11 committed a moment later. So each event also records its transaction's
-- id (xid8, which never wraps), and readers read in (xid, id) order only what transactions older than the oldest
-- one still running wrote (pg_snapshot_xmin): nothing can commit behind that any more. Rows from before this
-- migration get xid 0: they come first, in id order, as they were read before.
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX events_by_xid ON events (xid, id);

-- A destination's cursor is the (xid, id) pair of the last event it handled. A notification batch the service
-- took part of (a Discord 429 halfway) is kept with it, so a restart or another relay goes on from the first
-- message not taken; sent_at: when the service last took a message (the dashboard's notification health).
ALTER TABLE event_cursors ADD COLUMN last_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE event_cursors ADD COLUMN batch TEXT;
ALTER TABLE event_cursors ADD COLUMN sent_at BIGINT;
