#!/usr/bin/env bash
# backup.sh — consistent online backup of docket's SQLite database (and optionally results),
# with rotation and hook directories for off-box copies.
#
# Usage: backup.sh [--data-dir DIR] [--dest DIR] [--keep N] [--with-results]
#                  [--hooks-dir DIR] [--root DIR] [--dry-run]
#
# Defaults come from the environment (docket-backup.service loads /etc/docket/docket.env):
#   DATA_DIR (/var/lib/docket), BACKUP_DIR (DATA_DIR/backups), BACKUP_KEEP (7),
#   BACKUP_WITH_RESULTS (false), BACKUP_HOOKS_DIR (/etc/docket/backup).
#
# What it does:
#   1. runs BACKUP_HOOKS_DIR/pre.d/* (a failing pre hook aborts the backup);
#   2. copies DATA_DIR/db/docket.sqlite with SQLite's online backup API (sqlite3 `.backup`):
#      a consistent snapshot while the bot keeps writing (WAL); checks PRAGMA integrity_check;
#   3. with --with-results, archives DATA_DIR/results into results.tar;
#   4. writes MANIFEST and SHA256SUMS, then renames the directory into place
#      (DEST/docket-YYYYmmddTHHMMSSZ), so a half-written backup is never seen as one;
#   5. keeps the newest N backups (docket-* directories only) and deletes older ones;
#   6. runs post.d/* with BACKUP_PATH set (copy it off the box there); a failing post hook
#      makes the script exit non-zero but keeps the backup.
# Hooks get BACKUP_PHASE (pre|post), BACKUP_DIR, BACKUP_PATH (post only), DATA_DIR.
set -euo pipefail
umask 027
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

DATA_DIR="${DATA_DIR:-/var/lib/docket}"
DEST="${BACKUP_DIR:-}"
KEEP="${BACKUP_KEEP:-7}"
WITH_RESULTS="${BACKUP_WITH_RESULTS:-false}"
HOOKS_DIR="${BACKUP_HOOKS_DIR:-/etc/docket/backup}"

while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) DATA_DIR="${2:?}"; shift ;;
    --dest) DEST="${2:?}"; shift ;;
    --keep) KEEP="${2:?}"; shift ;;
    --with-results) WITH_RESULTS=true ;;
    --hooks-dir) HOOKS_DIR="${2:?}"; shift ;;
    --root) ROOT="${2:?}"; shift ;;
    --dry-run) DRY_RUN=1 ;;
    --quiet) ;; # accepted for BACKUP_ARGS compatibility; output goes to the journal anyway
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
ROOT="${ROOT%/}"
DEST="${DEST:-$DATA_DIR/backups}"
{ [[ "$KEEP" =~ ^[0-9]+$ ]] && [ "$KEEP" -ge 1 ]; } || die "--keep must be a whole number ≥ 1, not '$KEEP'"
case "$WITH_RESULTS" in true | 1 | yes) WITH_RESULTS=true ;; *) WITH_RESULTS=false ;; esac
command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 is not installed (apt-get install sqlite3)"

db="$(rp "$DATA_DIR/db/docket.sqlite")"
dest="$(rp "$DEST")"
hooks="$(rp "$HOOKS_DIR")"
[ -f "$db" ] || die "no database at $db"
case "$db$dest" in *"'"*) die "paths with a single quote are not supported" ;; esac

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
name="docket-$stamp"
# Two backups in the same second get -2, -3 … (names still sort oldest → newest).
n=1
while [ -e "$dest/$name" ] || [ -e "$dest/.$name.partial" ]; do
  n=$((n + 1))
  name="docket-$stamp-$n"
done
final="$dest/$name"
work="$dest/.$name.partial"

export BACKUP_DIR="$dest" DATA_DIR
export BACKUP_PHASE=pre
step "pre hooks ($hooks/pre.d)"
run_hooks "$hooks/pre.d" pre || die "a pre hook failed; no backup taken"

step "online SQLite backup of $DATA_DIR/db/docket.sqlite"
run mkdir -p "$work"
# .timeout waits for a writer's lock instead of failing with SQLITE_BUSY.
run sqlite3 "$db" ".timeout 20000" ".backup '$work/docket.sqlite'"
if [ "$DRY_RUN" != 1 ]; then
  check="$(sqlite3 "$work/docket.sqlite" "PRAGMA integrity_check;")"
  if [ "$check" != ok ]; then
    rm -rf "$work"
    die "integrity_check of the copy failed: ${check:0:500}"
  fi
  log "  integrity_check: ok"
fi

step "results ($([ "$WITH_RESULTS" = true ] && echo included || echo 'skipped; --with-results to include'))"
if [ "$WITH_RESULTS" = true ]; then
  if [ -d "$(rp "$DATA_DIR/results")" ]; then
    run tar -C "$(rp "$DATA_DIR")" -cf "$work/results.tar" results
  else
    skip "no results directory"
  fi
fi

step "manifest and checksums"
if [ "$DRY_RUN" != 1 ]; then
  {
    printf 'created_at=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf 'host=%s\n' "$(hostname 2>/dev/null || echo '?')"
    printf 'data_dir=%s\n' "$DATA_DIR"
    printf 'sqlite_version=%s\n' "$(sqlite3 --version | cut -d' ' -f1)"
    printf 'with_results=%s\n' "$WITH_RESULTS"
    printf 'user_version=%s\n' "$(sqlite3 "$work/docket.sqlite" 'PRAGMA user_version;')"
  } >"$work/MANIFEST"
  (cd "$work" && sha256sum -- * >SHA256SUMS)
  chmod 0640 "$work"/*
fi
run mv "$work" "$final"
log "  backup: $final"

step "rotation (keep $KEEP)"
count=0
while IFS= read -r old; do
  count=$((count + 1))
  if [ "$count" -gt "$KEEP" ]; then run rm -rf "${dest:?}/$old"; fi
done < <(cd "$dest" 2>/dev/null && find . -mindepth 1 -maxdepth 1 -type d -name 'docket-*' -printf '%f\n' | LC_ALL=C sort -r)

export BACKUP_PHASE=post BACKUP_PATH="$final"
step "post hooks ($hooks/post.d)"
post_status=0
run_hooks "$hooks/post.d" post || post_status=$?
if [ "$post_status" -ne 0 ]; then
  die "a post hook failed (status $post_status); the backup itself is at $final"
fi
log "backup done: $final"
