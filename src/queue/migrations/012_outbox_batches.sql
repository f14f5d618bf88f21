-- A notification batch the service took part of (a Discord 429 halfway), kept with its destination's cursor so a
-- restart goes on from the first message not taken instead of sending the batch again; and when the service last
-- took a message (the dashboard's notification health).
ALTER TABLE event_cursors ADD COLUMN batch TEXT;
ALTER TABLE event_cursors ADD COLUMN sent_at INTEGER;
