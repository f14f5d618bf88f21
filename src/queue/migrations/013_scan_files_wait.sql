-- SERVER_WAIT_FOR_FILES (issue 48 item 1): when a due scan began waiting for its files to appear on the relay's
-- disk (ms); NULL while it never waited. Its checks back off from it, and it fails once it waited the bound.
ALTER TABLE scans ADD COLUMN files_wait_since INTEGER;
