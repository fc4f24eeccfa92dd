-- docket_claim_download v3 (issue 14 item 8): the same claim as v2 (0006), as three plain statements
-- after the budget lock. v2 was one UPDATE … FROM (CTE) whose plan joined every `accepted` row to the
-- head and ran the budget sum once per row — 2 ms and ≈ 2 500 buffers a claim with 2 000 queued
-- (bench/queue/pg-diagnose.ts); now the head is one row of the partial index file_jobs_accepted, the
-- sum one pass over file_jobs_reserved, the UPDATE one row by primary key. Each statement takes a new
-- snapshot after the lock was granted (READ COMMITTED), so it sees every claim committed before.
CREATE OR REPLACE FUNCTION docket_claim_download(p_lock_class integer, p_owner text, p_lease_until text, p_now text, p_total double precision, p_multiplier double precision, p_unsized double precision, p_floor double precision)
RETURNS SETOF file_jobs LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_id bigint;
  v_size bigint;
  v_reservation double precision;
  v_used double precision;
BEGIN
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
