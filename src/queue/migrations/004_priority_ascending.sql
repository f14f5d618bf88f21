-- Lower priority numbers are delivered first (plex_autoscan's PriorityQueue order), and each target is
-- claimed on its own (one Plex scan at a time): the claim walks this index for one target.
DROP INDEX IF EXISTS deliveries_claim_order;
CREATE INDEX deliveries_claim_order ON deliveries (target, status, priority, next_at, scan_id);
-- The next time a busy-or-free target has a delivery due, read in one index step.
CREATE INDEX deliveries_by_target_next ON deliveries (target, status, next_at);
