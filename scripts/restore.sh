#!/usr/bin/env bash
# restore.sh — put a backup made by backup.sh back in place.
#
# Usage: restore.sh [--no-service] [--with-results] [--data-dir DIR] [--root DIR] [--dry-run] BACKUP
#        restore.sh [options] --from-restic SNAPSHOT
#   BACKUP   a backup directory (DATA_DIR/backups/docket-YYYYmmddTHHMMSSZ) or a docket.sqlite file
#   SNAPSHOT a snapshot id of the restic repository configured in /etc/docket/restic.env, or
#            `latest` (the newest docket snapshot of BACKUP_RESTIC_HOST): it is first restored into
#            DATA_DIR/backups/restic-<snapshot id>/ (a backup directory like a local one, kept),
#            then restored from there as below (the disk-loss recovery of docs/backup.md)
#
# Steps:
#   1. verify: SHA256SUMS (when present) and PRAGMA integrity_check on the backup's database;
#      nothing is touched when either fails;
#   2. stop every unit that opens the database (unless --no-service; use that when the bot is
#      not run by systemd): docket.service, docket-janitor.timer and docket-backup.timer (so
#      neither fires during the restore) and their one-shot services, should one be running;
#   3. move the current db/docket.sqlite and its -wal/-shm aside into db/pre-restore-<stamp>/
#      (a stale -wal next to a restored file would corrupt it), copy the backup in, chown it
#      to docket, and check integrity again in place;
#   4. with --with-results, move results/ aside the same way and unpack results.tar;
#   5. start again those of docket.service and the two timers that were active (unless
#      --no-service); the one-shots run at their next timer tick.
# SYSTEMCTL replaces systemctl (tests). DATA_DIR: --data-dir, else $DATA_DIR, else docket.env, else /var/lib/docket.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=scripts/lib/restic.sh
. "$HERE/lib/restic.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

SERVICE=1 WITH_RESULTS=0 DATA_DIR_ARG="" BACKUP="" SNAPSHOT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-service) SERVICE=0 ;;
    --with-results) WITH_RESULTS=1 ;;
    --data-dir) DATA_DIR_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --root) ROOT="$(arg_value "$1" "${2-}")"; shift ;;
    --dry-run) DRY_RUN=1 ;;
    --from-restic) SNAPSHOT="${2:?--from-restic needs a snapshot id or latest}"; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) die "unknown option: $1 (see --help)" ;;
    *) [ -z "$BACKUP" ] || die "only one BACKUP"; BACKUP="$1" ;;
  esac
  shift
done
ROOT="${ROOT%/}"
if [ -n "$SNAPSHOT" ]; then
  [ -z "$BACKUP" ] || die "give a BACKUP or --from-restic SNAPSHOT, not both"
else
  [ -n "$BACKUP" ] || die "which backup? (see --help)"
fi
command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 is not installed (apt-get install sqlite3)"

DATA_DIR="${DATA_DIR_ARG:-${DATA_DIR:-$(env_get "$(rp /etc/docket/docket.env)" DATA_DIR)}}"
DATA_DIR="${DATA_DIR:-/var/lib/docket}"
SYSTEMCTL_CMD="${SYSTEMCTL:-systemctl}"

# json_field JSON KEY — a string field of restic's JSON (first occurrence).
json_field() { printf '%s' "$1" | sed -n "s/^[^{]*{.*\"$2\":\"\([^\"]*\)\".*/\1/p" | head -n1; }

if [ -n "$SNAPSHOT" ]; then
  step "fetch restic snapshot $SNAPSHOT"
  restic_load_config
  [ "$RESTIC_ON" = 1 ] || die "no restic repository configured: set RESTIC_REPOSITORY in $(rp "$RESTIC_ENV_FILE") and the password in /etc/docket/restic-password (docs/backup.md)"
  problem="$(restic_check_ready)"
  [ -z "$problem" ] || die "$problem"
  RESTIC_ERR="$(mktemp)"
  trap 'rm -f "$RESTIC_ERR"' EXIT
  if [ "$SNAPSHOT" = latest ]; then
    listing="$(restic_run snapshots --json --host "$RESTIC_HOST" --tag docket --latest 1)" || die "$(restic_explain "$RESTIC_ERR")"
  else
    listing="$(restic_run snapshots --json "$SNAPSHOT")" || die "$(restic_explain "$RESTIC_ERR")"
  fi
  snap_id="$(json_field "$listing" short_id)"
  [ -n "$snap_id" ] || die "no docket snapshot '$SNAPSHOT' in $(restic_where) (host $RESTIC_HOST; list them: restic snapshots --tag docket)"
  log "  snapshot $snap_id of $(json_field "$listing" time | cut -c1-19)Z in $(restic_where)"
  BACKUP="$(rp "$DATA_DIR/backups")/restic-$snap_id"
  if [ -f "$BACKUP/MANIFEST" ]; then
    log "  = already restored in $BACKUP"
  elif [ "$DRY_RUN" = 1 ]; then
    show_cmd restic restore "$snap_id" --target "$BACKUP"
    # A dry run still checks the snapshot itself: restored into a throwaway directory.
    BACKUP="$(mktemp -d)"
    trap 'rm -f "$RESTIC_ERR"; rm -rf "$BACKUP"' EXIT
    restic_restore "$snap_id" "$BACKUP" || die "$(restic_explain "$RESTIC_ERR")"
  else
    run rm -rf "$BACKUP.partial"
    run mkdir -p "$BACKUP.partial"
    show_cmd restic restore "$snap_id" --target "$BACKUP.partial"
    restic_restore "$snap_id" "$BACKUP.partial" || die "$(restic_explain "$RESTIC_ERR")"
    run mv "$BACKUP.partial" "$BACKUP"
    if [ "$(id -u)" = 0 ] && user_exists docket; then run chown -R docket:docket "$BACKUP"; fi
  fi
fi

if [ -d "$BACKUP" ]; then
  src_dir="$(cd "$BACKUP" && pwd)"
  src_db="$src_dir/docket.sqlite"
else
  src_dir=""
  src_db="$BACKUP"
fi
[ -f "$src_db" ] || die "no database in the backup: $src_db"

step "verify the backup"
if [ -n "$src_dir" ] && [ -f "$src_dir/SHA256SUMS" ]; then
  (cd "$src_dir" && sha256sum --quiet -c SHA256SUMS) || die "checksums do not match in $src_dir"
  log "  checksums ok"
fi
check="$(sqlite3 -readonly "$src_db" "PRAGMA integrity_check;" 2>&1)" || die "cannot open $src_db: ${check:0:300}"
[ "$check" = ok ] || die "integrity_check of $src_db failed: ${check:0:500}"
log "  integrity_check: ok"
if [ "$WITH_RESULTS" = 1 ] && { [ -z "$src_dir" ] || [ ! -f "$src_dir/results.tar" ]; }; then
  die "--with-results, but the backup has no results.tar"
fi

db_dir="$(rp "$DATA_DIR/db")"
target="$db_dir/docket.sqlite"
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
# Units that open the database: the bot, and the timers whose one-shots (janitor, backup) do.
# A janitor or backup starting mid-restore would open the old file and leave a stale -wal/-shm.
mapfile -t RESUME_UNITS < <(installed_units docket.service docket-janitor.timer docket-backup.timer docket-backup-verify.timer)
mapfile -t TIMERS < <(installed_units docket-janitor.timer docket-backup.timer docket-backup-verify.timer)
mapfile -t ONESHOTS < <(installed_units docket-janitor.service docket-backup.service docket-backup-verify.service)
was_active=()
moved_aside=() # what this run moved aside, for the final message (nothing on an empty data dir)

step "stop docket.service, the janitor and backup timers and their services"
if [ "$SERVICE" = 1 ]; then
  for unit in "${RESUME_UNITS[@]}"; do
    if "$SYSTEMCTL_CMD" is-active --quiet "$unit" 2>/dev/null; then was_active+=("$unit"); fi
  done
  # Timers first, so that nothing is triggered while the services stop.
  if [ "${#TIMERS[@]}" -gt 0 ]; then run "$SYSTEMCTL_CMD" stop "${TIMERS[@]}"; fi
  run "$SYSTEMCTL_CMD" stop docket.service "${ONESHOTS[@]}"
else
  skip "--no-service (make sure the bot, the janitor and backups are not running)"
fi

step "restore the database into $DATA_DIR/db"
run mkdir -p "$db_dir"
# The current file moves aside together with its -wal/-shm, under the same names, so the set
# stays openable (committed rows may still live only in the -wal).
aside="$db_dir/pre-restore-$stamp"
for f in "$target" "$target-wal" "$target-shm" "$target-journal"; do
  if [ -e "$f" ]; then
    run mkdir -p "$aside"
    run mv "$f" "$aside/"
  fi
done
if [ -d "$aside" ] || { [ "$DRY_RUN" = 1 ] && [ -e "$target" ]; }; then moved_aside+=("$DATA_DIR/db/pre-restore-$stamp/"); fi
run cp "$src_db" "$target.restoring"
run chmod 0640 "$target.restoring"
if user_exists docket; then run chown docket:docket "$target.restoring"; else skip "chown docket (no such user)"; fi
run mv "$target.restoring" "$target"
if [ "$DRY_RUN" != 1 ]; then
  after="$(sqlite3 "$target" "PRAGMA integrity_check;")"
  [ "$after" = ok ] || die "integrity_check after restore failed: ${after:0:300} (previous files kept in $aside)"
  log "  integrity_check in place: ok"
fi

step "results"
if [ "$WITH_RESULTS" = 1 ]; then
  results="$(rp "$DATA_DIR/results")"
  if [ -e "$results" ]; then
    run mv "$results" "$results.pre-restore-$stamp"
    moved_aside+=("$DATA_DIR/results.pre-restore-$stamp/")
  fi
  run tar -C "$(rp "$DATA_DIR")" -xf "$src_dir/results.tar"
  if user_exists docket; then run chown -R docket:docket "$results"; fi
else
  skip "results kept as they are (--with-results to restore them)"
fi

step "start the units that were active"
if [ "$SERVICE" = 1 ]; then
  if [ "${#was_active[@]}" -gt 0 ]; then
    run "$SYSTEMCTL_CMD" start "${was_active[@]}"
  else
    skip "none of ${RESUME_UNITS[*]} was active before the restore; start them yourself"
  fi
  for unit in "${RESUME_UNITS[@]}"; do
    case " ${was_active[*]} " in *" $unit "*) ;; *) log "  note: $unit was not active before; left stopped" ;; esac
  done
else
  skip "--no-service"
fi
if [ "${#moved_aside[@]}" -gt 0 ]; then
  log "restore done from $BACKUP; previous files moved aside: ${moved_aside[*]} (delete them once the bot is fine)"
else
  log "restore done from $BACKUP; nothing was there before, so nothing was moved aside"
fi
