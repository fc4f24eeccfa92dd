#!/usr/bin/env bash
# rollback.sh — undo the last upgrade in one command (`docket rollback` runs it): back to the
# release the running one was installed over, with the database of that release.
#
# Usage: rollback.sh [--to RELEASE] [--restore | --keep-db] [--data-dir DIR] [--root DIR] [--dry-run]
#
# install.sh takes a backup before every upgrade (kind pre-upgrade; its MANIFEST names the release
# the database came from and the one being installed, upgrade_to). rollback.sh:
#   1. finds the newest pre-upgrade backup whose upgrade_to is the current release (or, with
#      --to, one whose release is RELEASE); the release to go back to is the one it came from,
#      and must still be in /opt/docket/releases;
#   2. decides whether the database must go back too: when the live database has applied a drizzle
#      migration the old release does not list, the old code cannot run on it, so the backup is
#      restored; otherwise the live data is kept (--restore restores anyway; --keep-db refuses
#      to go on when a restore is needed);
#   3. checks the backup (checksums, integrity_check) before anything is stopped;
#   4. stops the timers, the one-shots and docket.service (so no janitor or backup runs on the
#      wrong code), restores (restore.sh; the current files move aside into db/pre-restore-*),
#      points /opt/docket/current at the old release and installs its units, starts docket.service,
#      waits for /healthz, then starts the timers that were running.
# Nothing is stopped when a check fails. SYSTEMCTL and CURL replace systemctl and curl (tests);
# HEALTH_TIMEOUT (seconds, default 60) bounds the health wait.
# Exit codes: 1 refused or failed (the line says why), 4 rolled back but /healthz did not answer.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=scripts/lib/release.sh
. "$HERE/lib/release.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

TO="" DB_POLICY=auto DATA_DIR_ARG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --to) TO="${2:?--to needs a release id (ls /opt/docket/releases)}"; shift ;;
    --restore) DB_POLICY=restore ;;
    --keep-db) DB_POLICY=keep ;;
    --data-dir) DATA_DIR_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --root) ROOT="$(arg_value "$1" "${2-}")"; shift ;;
    --dry-run) DRY_RUN=1 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
normalize_root
if [ -z "$ROOT" ] && [ "$DRY_RUN" != 1 ] && [ "$(id -u)" -ne 0 ]; then die "run as root: sudo docket rollback"; fi
command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 is not installed (apt-get install sqlite3)"
ENV_FILE="$(rp /etc/docket/docket.env)"
DATA_DIR="${DATA_DIR_ARG:-$(env_get "$ENV_FILE" DATA_DIR)}"
DATA_DIR="${DATA_DIR:-/var/lib/docket}"
BACKUPS="$(env_get "$ENV_FILE" BACKUP_DIR)"
BACKUPS="$(rp "${BACKUPS:-$DATA_DIR/backups}")"
HTTP_PORT="$(env_get "$ENV_FILE" HTTP_PORT)"
HTTP_PORT="${HTTP_PORT:-8090}"
SYSTEMCTL_CMD="${SYSTEMCTL:-$([ -z "$ROOT" ] && echo systemctl)}"
CURL_CMD="${CURL:-curl}"
HEALTH_TIMEOUT="${HEALTH_TIMEOUT:-60}"
UNIT_DIR="$(rp /etc/systemd/system)"

step "find the release to go back to"
current="$(current_release)"
[ -n "$current" ] || die "$(rp "$APP_DIR/current") does not point at a release: is docket installed?"
backup=""
# Newest first: backup names carry their UTC time stamp.
while IFS= read -r dir; do
  m="$BACKUPS/$dir/MANIFEST"
  [ -r "$m" ] || continue
  if [ -n "$TO" ]; then
    [ "$(manifest_get "$m" release)" = "$TO" ] || continue
  else
    [ "$(manifest_get "$m" upgrade_to)" = "$current" ] || continue
  fi
  backup="$BACKUPS/$dir"
  break
done < <(cd "$BACKUPS" 2>/dev/null && find . -mindepth 1 -maxdepth 1 -type d -name 'pre-upgrade-*' -printf '%f\n' | LC_ALL=C sort -r)
if [ -n "$TO" ]; then
  target="$TO"
elif [ -n "$backup" ]; then
  target="$(manifest_get "$backup/MANIFEST" release)"
else
  die "no pre-upgrade backup in $BACKUPS names release $current as its upgrade target, so there is no upgrade to undo (install.sh takes one before each upgrade). To run another release: --to RELEASE (ls $APP_DIR/releases), or that release's scripts/install.sh (docs/upgrading.md)"
fi
[ "$target" != "$current" ] || die "release $target is the current one already"
target_dir="$(release_dir "$target")"
[ -f "$target_dir/.complete" ] || die "release $target is not in $APP_DIR/releases any more (install.sh keeps the three newest); install it again from its source: git checkout <its version> && scripts/install.sh"
log "  current release: $current"
log "  back to release: $target${backup:+ (pre-upgrade backup ${backup##*/})}"

step "does the database have to go back too?"
live_db="$(rp "$DATA_DIR/db/docket.sqlite")"
restore_needed=0
if [ -f "$live_db" ]; then
  read -r _ live_created _ < <(db_latest_migration "$live_db")
  read -r target_when target_tag < <(journal_latest "$target_dir")
  live_name="$(migration_name "$(release_dir "$current")" "$live_created")"
  if [ "$live_created" -gt "$target_when" ]; then
    restore_needed=1
    log "  the database has applied $live_name; release $target knows migrations up to $target_tag: it must be restored"
  else
    log "  the database's migration ($live_name) is one release $target knows: its data can stay"
  fi
else
  log "  no database at $DATA_DIR/db/docket.sqlite: nothing to restore"
fi
do_restore=0
case "$DB_POLICY" in
  restore) do_restore=1 ;;
  keep)
    [ "$restore_needed" = 0 ] || die "--keep-db, but release $target cannot run on this database (it has applied $live_name); drop --keep-db to restore the pre-upgrade backup"
    ;;
  auto) do_restore="$restore_needed" ;;
esac
if [ "$do_restore" = 1 ]; then
  [ -n "$backup" ] || die "the database must be restored for release $target, but there is no pre-upgrade backup of release $target in $BACKUPS; nothing was changed"
  log "  restore from $backup ($(manifest_get "$backup/MANIFEST" created_at), migration $(manifest_get "$backup/MANIFEST" migration)); jobs recorded since then are not in it"
else
  skip "the database stays as it is (--restore to put back the pre-upgrade backup anyway)"
fi

restore_args=(--no-service --data-dir "$DATA_DIR")
if [ -n "$ROOT" ]; then restore_args+=(--root "$ROOT"); fi
step "check the backup before anything is stopped"
if [ "$do_restore" = 1 ]; then
  STEP_PARENT="$STEP_NO" bash "$HERE/restore.sh" "${restore_args[@]}" --dry-run "$backup" >/dev/null 2>&1 ||
    die "the pre-upgrade backup $backup does not pass its checks (run: $HERE/restore.sh --dry-run $backup); nothing was changed"
  log "  checksums and integrity_check: ok"
else
  skip "no restore"
fi
if [ "$DRY_RUN" = 1 ]; then restore_args+=(--dry-run); fi

TIMERS=(docket-janitor.timer docket-backup.timer docket-backup-verify.timer)
ONESHOTS=(docket-janitor.service docket-backup.service docket-backup-verify.service)
mapfile -t timers < <(installed_units "${TIMERS[@]}")
mapfile -t oneshots < <(installed_units "${ONESHOTS[@]}")
was_active=()
step "stop the timers, their services and docket.service"
if [ -n "$SYSTEMCTL_CMD" ]; then
  for u in "${timers[@]}"; do
    if "$SYSTEMCTL_CMD" is-active --quiet "$u" 2>/dev/null; then was_active+=("$u"); fi
  done
  if [ "${#timers[@]}" -gt 0 ]; then run "$SYSTEMCTL_CMD" stop "${timers[@]}"; fi
  run "$SYSTEMCTL_CMD" stop docket.service "${oneshots[@]}"
else
  skip "systemctl (--root; set SYSTEMCTL to run it)"
fi

step "restore the database"
if [ "$do_restore" = 1 ]; then
  STEP_PARENT="$STEP_NO" bash "$HERE/restore.sh" "${restore_args[@]}" "$backup" || {
    # Never start the bot without its database: it would create an empty one.
    [ -f "$live_db" ] || die "rollback not done: the restore of $backup failed (see above) after the database of release $current was moved aside into $DATA_DIR/db/pre-restore-*/; move its files back into $DATA_DIR/db/ and run: systemctl start docket.service"
    if [ -n "$SYSTEMCTL_CMD" ]; then run "$SYSTEMCTL_CMD" start docket.service "${was_active[@]}"; fi
    die "rollback not done: the restore of $backup failed (see above); release $current runs again"
  }
else
  skip "kept"
fi

step "point $APP_DIR/current at $target and install its units"
run ln -sfn "releases/$target" "$(rp "$APP_DIR/current")"
run touch "$target_dir" # newest for install.sh's rotation, like a reused release
for unit in "$target_dir"/systemd/*.service "$target_dir"/systemd/*.timer; do
  [ -e "$unit" ] || continue
  run install -m 0644 "$unit" "$UNIT_DIR/$(basename "$unit")"
done
if [ -n "$SYSTEMCTL_CMD" ]; then run "$SYSTEMCTL_CMD" daemon-reload; fi

step "start docket.service and the timers"
if [ -n "$SYSTEMCTL_CMD" ]; then
  run "$SYSTEMCTL_CMD" start docket.service
  if [ "$DRY_RUN" != 1 ]; then
    deadline=$((SECONDS + HEALTH_TIMEOUT))
    until "$CURL_CMD" -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$HTTP_PORT/healthz" 2>/dev/null; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        if [ "${#was_active[@]}" -gt 0 ]; then run "$SYSTEMCTL_CMD" start "${was_active[@]}"; fi
        printf 'error: rolled back to release %s, but http://127.0.0.1:%s/healthz did not answer within %ss; look at: journalctl -u docket.service -n 100\n' "$target" "$HTTP_PORT" "$HEALTH_TIMEOUT" >&2
        exit 4
      fi
      sleep 1
    done
    log "  healthy"
  fi
  if [ "${#was_active[@]}" -gt 0 ]; then run "$SYSTEMCTL_CMD" start "${was_active[@]}"; fi
else
  skip "systemctl (--root; set SYSTEMCTL to run it)"
fi
if [ "$DRY_RUN" = 1 ]; then
  log "dry run: nothing was changed; a real run goes back to release $target$([ "$do_restore" = 1 ] && echo " and restores ${backup##*/}")"
else
  log "rolled back to release $target$([ "$do_restore" = 1 ] && echo "; database restored from ${backup##*/} (the previous one is in $DATA_DIR/db/pre-restore-*)")"
fi
