# shellcheck shell=bash
# scripts/lib/report.sh — how backup.sh reports a run beyond its own output: the backup status
# file (CONTRACTS.md §1, through `docket backup-status`, read by /readyz, /metrics and
# `docket status`) and an operator alert (CONTRACTS.md §2, `docket notify`, best-effort: a run
# never fails because the alert could not be recorded). Sourced after common.sh; uses HERE,
# DATA_DIR, ROOT and DRY_RUN. BUN replaces the bun binary; DOCKET_NOTIFY replaces
# `docket notify` (a command line, tests).

REPORT_BUN="${BUN:-$(command -v bun 2>/dev/null || printf /usr/local/bin/bun)}"
REPORT_CLI="$HERE/../bot/cli/main.ts"

# report_status ARG… — `docket backup-status ARG… --data-dir DATA_DIR`; a failure is a warning.
report_status() {
  local out
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  out="$("$REPORT_BUN" "$REPORT_CLI" backup-status "$@" --data-dir "$(rp "$DATA_DIR")" 2>&1)" ||
    warn "could not record the result in $DATA_DIR/backups/status.json: ${out:0:300}"
}

# alert CAUSE TEXT — `docket notify CAUSE TEXT`, best-effort and silent.
alert() {
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  if [ -n "${DOCKET_NOTIFY:-}" ]; then
    # shellcheck disable=SC2086 # a command line with arguments, on purpose
    $DOCKET_NOTIFY "$1" "$2" >/dev/null 2>&1 || true
  else
    "$REPORT_BUN" "$REPORT_CLI" notify "$1" "$2" >/dev/null 2>&1 || true
  fi
}
