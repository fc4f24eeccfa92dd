-- The download claim in one round trip (issue 14 item 8): the budget lock, then the claim as its own
-- statement (a fresh snapshot once the lock is granted, READ COMMITTED), both inside the caller's
-- statement, so the lock is held only while the server runs them (bot/jobs/pg-statements.ts claimDownload).
CREATE OR REPLACE FUNCTION docket_claim_download(p_lock_class integer, p_owner text, p_lease_until text, p_now text, p_total double precision, p_multiplier double precision, p_mode_limit double precision, p_floor double precision)
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
           least(p_total, greatest(1::float8, p_floor, ceil(CASE WHEN head.declared_size IS NOT NULL AND head.declared_size >= 0 THEN head.declared_size * p_multiplier ELSE p_mode_limit END))) AS reservation,
           (SELECT coalesce(sum(o.reserved_bytes), 0) FROM file_jobs o WHERE o.reserved_bytes > 0 AND o.id <> head.id)::float8 AS used
    FROM head
  )
  UPDATE file_jobs f SET lease_owner = p_owner, lease_until = p_lease_until, attempts = f.attempts + 1, reserved_bytes = r.reservation::bigint, not_before = NULL, updated_at = p_now
  FROM r WHERE f.id = r.id AND f.status = 'accepted' AND (r.used = 0 OR r.used + r.reservation <= p_total)
  RETURNING f.*;
END
$$;
