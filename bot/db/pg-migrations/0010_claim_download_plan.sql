-- docket_claim_download plans its statements with index scans only (issue 14 item 8): on a table the
-- statistics have not seen yet (a new database, a burst of jobs before autovacuum's first ANALYZE) the
-- planner chose sequential scans of the whole table for the head and the budget sum — 0.6–0.7 ms each
-- with 2 000 rows, growing with every finished row kept (bench/queue/pg-diagnose.ts). The rows those
-- statements need are in the partial indexes file_jobs_accepted and file_jobs_reserved, which hold only
-- the jobs waiting or holding a reservation, so an index scan is right whatever the statistics say.
ALTER FUNCTION docket_claim_download(integer, text, text, text, double precision, double precision, double precision, double precision) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION docket_claim_download(integer, text, text, text, double precision, double precision, double precision, double precision) SET enable_bitmapscan = off;
