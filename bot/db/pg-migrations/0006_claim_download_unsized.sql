-- docket_claim_download v2: an unsized file's reservation is given by the caller (bot/jobs/budget.ts
-- reservationFor(null, …)), so that rule lives in one place; a sized file's stays declared size ×
-- multiplier with the floor and the cap, computed here in the same float8 arithmetic.
DROP FUNCTION IF EXISTS docket_claim_download(integer, text, text, text, double precision, double precision, double precision, double precision);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION docket_claim_download(p_lock_class integer, p_owner text, p_lease_until text, p_now text, p_total double precision, p_multiplier double precision, p_unsized double precision, p_floor double precision)
RETURNS SETOF file_jobs LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(p_lock_class, 0);
  RETURN QUERY
  WITH head AS (
    SELECT j.id, j.declared_size FROM file_jobs j
    WHERE j.status = 'accepted' AND (j.lease_until IS NULL OR j.lease_until <= p_now) AND (j.not_before IS NULL OR j.not_before <= p_now)
    ORDER BY j.id ASC LIMIT 1 FOR UPDATE SKIP LOCKED
  ), r AS (
    SELECT head.id,
           CASE WHEN head.declared_size IS NOT NULL AND head.declared_size >= 0
                THEN least(p_total, greatest(1::float8, p_floor, ceil(head.declared_size * p_multiplier)))
                ELSE p_unsized END AS reservation,
           (SELECT coalesce(sum(o.reserved_bytes), 0) FROM file_jobs o WHERE o.reserved_bytes > 0 AND o.id <> head.id)::float8 AS used
    FROM head
  )
  UPDATE file_jobs f SET lease_owner = p_owner, lease_until = p_lease_until, attempts = f.attempts + 1, reserved_bytes = r.reservation::bigint, not_before = NULL, updated_at = p_now
  FROM r WHERE f.id = r.id AND f.status = 'accepted' AND (r.used = 0 OR r.used + r.reservation <= p_total)
  RETURNING f.*;
END
$$;
