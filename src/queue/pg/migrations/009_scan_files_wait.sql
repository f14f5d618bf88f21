-- SERVER_WAIT_FOR_FILES (issue 48 item 1), as the SQLite store keeps it (its migration 013): when a due scan began
-- waiting for its files to appear on the relay's disk; NULL while it never waited.
ALTER TABLE scans ADD COLUMN files_wait_since BIGINT;
