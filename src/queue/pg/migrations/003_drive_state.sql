-- The drive monitor's state in the shared database (SERVER_QUEUE_URL), so that whichever relay polls the drive
-- sees what the one before it cached: the id -> path cache (the SQLite cache file's items and drives tables;
-- a GIN index on parents stands in for its item_parents table), and the leases that let one relay at a time
-- do a job such as polling the drive.
CREATE TABLE drive_items (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  parents TEXT[] NOT NULL,
  md5 TEXT,
  mime TEXT,
  paths TEXT[] NOT NULL
);
CREATE INDEX drive_items_by_parent ON drive_items USING gin (parents);

CREATE TABLE drive_names (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL
);

-- holder: the relay's name (shown); owner: one running process (a relay restarted under the same name is
-- another owner); expires_at and since: milliseconds since 1970 on the database's clock.
CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  owner TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  since BIGINT NOT NULL
);
