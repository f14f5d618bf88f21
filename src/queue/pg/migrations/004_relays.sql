-- The relays sharing this queue and the media servers each can deliver to. A relay writes its row at start and
-- renews live_until while it runs (a killed relay's row goes stale after its lease); a clean stop removes it.
-- A scan that becomes due gets one delivery per server that a live relay has (relay_targets).
CREATE TABLE relays (
  relay TEXT PRIMARY KEY,
  started_at BIGINT NOT NULL,
  live_until BIGINT NOT NULL
);

-- target: the delivery's name on a shared queue, '<kind>@<the server's own id>' (plex@<machineIdentifier>).
CREATE TABLE relay_targets (
  relay TEXT NOT NULL REFERENCES relays (relay) ON DELETE CASCADE,
  target TEXT NOT NULL,
  PRIMARY KEY (relay, target)
);
CREATE INDEX relay_targets_by_target ON relay_targets (target);

-- Every server a relay ever named, kept for the history: its kind (plex, jellyfin, emby) and the name people read.
CREATE TABLE targets (
  target TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  label TEXT
);
