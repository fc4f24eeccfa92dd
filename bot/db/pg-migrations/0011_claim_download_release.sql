-- docket_claim_download v4 (issue 14 item 8): v3 (0009, 0010) with one more argument, the jobs whose
-- budget reservation this process is to release (JobStore.claimDownload's `release`: their temp files
-- are gone after `ready`, seed 000), released as JobStore.releaseReservation does — only while the job
-- is finished — in the claim's own transaction, so the release after one job costs no round trip of
-- its own and the budget sum that follows already sees it (each statement takes a new snapshot and sees
-- this transaction's writes). v3 stays for a host of the previous release until it is restarted.
CREATE OR REPLACE FUNCTION docket_claim_download(p_lock_class integer, p_owner text, p_lease_until text, p_now text, p_total double precision, p_multiplier double precision, p_unsized double precision, p_floor double precision, p_release bigint[])
RETURNS SETOF file_jobs LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_id bigint;
  v_size bigint;
  v_reservation double precision;
  v_used double precision;
BEGIN
  IF cardinality(p_release) > 0 THEN
    UPDATE file_jobs r SET reserved_bytes = 0
    WHERE r.id = ANY(p_release) AND r.reserved_bytes > 0 AND r.status IN ('ready', 'failed', 'expired');
  END IF;
  PERFORM pg_advisory_xact_lock(p_lock_class, 0);
  SELECT j.id, j.declared_size INTO v_id, v_size FROM file_jobs j
  WHERE j.status = 'accepted' AND (j.lease_until IS NULL OR j.lease_until <= p_now) AND (j.not_before IS NULL OR j.not_before <= p_now)
  ORDER BY j.id ASC LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF v_id IS NULL THEN
    RETURN;
  END IF;
  v_reservation := CASE WHEN v_size IS NOT NULL AND v_size >= 0
                        THEN least(p_total, greatest(1::float8, p_floor, ceil(v_size * p_multiplier)))
                        ELSE p_unsized END;
  SELECT coalesce(sum(o.reserved_bytes), 0)::float8 INTO v_used FROM file_jobs o WHERE o.reserved_bytes > 0 AND o.id <> v_id;
  IF NOT (v_used = 0 OR v_used + v_reservation <= p_total) THEN
    RETURN;
  END IF;
  RETURN QUERY
  UPDATE file_jobs f SET lease_owner = p_owner, lease_until = p_lease_until, attempts = f.attempts + 1, reserved_bytes = v_reservation::bigint, not_before = NULL, updated_at = p_now
  WHERE f.id = v_id AND f.status = 'accepted'
  RETURNING f.*;
END
$$;
--> statement-breakpoint
-- As v3 (0010): index scans only, whatever the statistics say.
ALTER FUNCTION docket_claim_download(integer, text, text, text, double precision, double precision, double precision, double precision, bigint[]) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION docket_claim_download(integer, text, text, text, double precision, double precision, double precision, double precision, bigint[]) SET enable_bitmapscan = off;
