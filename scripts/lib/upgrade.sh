# shellcheck shell=bash
# scripts/lib/upgrade.sh — install.sh's upgrade step (docs/upgrading.md), kept apart from the rest
# of install.sh. Sourced by install.sh after common.sh and release.sh; uses its SYSTEMCTL_CMD,
# DATA_DIR, ROOT, DRY_RUN, STEP_NO, HERE and existing().
#
# Before /opt/docket/current moves from release PREV to release NEW on a host where PREV runs:
#   1. the timers and their one-shots are stopped, so nothing runs the new code before the bot's
#      restart (the janitor opens the database, and opening it applies NEW's migrations), and no
#      backup competes with the next step;
#   2. a pre-upgrade backup is taken (backup.sh --kind pre-upgrade: MANIFEST release=PREV,
#      upgrade_to=NEW, the migration PREV's database has applied), which `docket rollback` restores;
#   3. if that backup fails, the timers start again and the upgrade stops: current still points
#      at PREV and the bot runs as before.
# install.sh's "start units" step restarts docket.service and then starts the timers again.

# The units whose runs must not straddle the switch (only those with a unit file are touched).
UPGRADE_TIMERS=(docket-janitor.timer docket-backup.timer docket-backup-verify.timer)
UPGRADE_ONESHOTS=(docket-janitor.service docket-backup.service docket-backup-verify.service)
UPGRADE_PAUSED=()

# upgrade_resume — start again the timers upgrade_prepare stopped.
upgrade_resume() {
  if [ "${#UPGRADE_PAUSED[@]}" -gt 0 ]; then run "$SYSTEMCTL_CMD" start "${UPGRADE_PAUSED[@]}"; fi
}

# upgrade_prepare PREV NEW — steps 1-3 above. Exits (through die) when the backup fails.
upgrade_prepare() {
  local prev="$1" new="$2" timers oneshots args dest
  log "  upgrade: release $prev -> $new"
  mapfile -t timers < <(installed_units "${UPGRADE_TIMERS[@]}")
  mapfile -t oneshots < <(installed_units "${UPGRADE_ONESHOTS[@]}")
  if [ -z "$SYSTEMCTL_CMD" ]; then
    skip "stop the timers (--root; set SYSTEMCTL to run it)"
  elif [ "${#timers[@]}" -gt 0 ]; then
    run "$SYSTEMCTL_CMD" stop "${timers[@]}"
    run "$SYSTEMCTL_CMD" stop "${oneshots[@]}"
    UPGRADE_PAUSED=("${timers[@]}")
    if [ "${NO_START:-0}" = 1 ]; then
      log "  note: --no-start, so the timers stay stopped; once the bot runs the new release: systemctl restart docket.service && systemctl start ${timers[*]}"
    fi
  fi
  if [ ! -f "$(rp "$DATA_DIR/db/docket.sqlite")" ]; then
    log "  = no database yet: no pre-upgrade backup"
    return 0
  fi
  args=(--kind pre-upgrade --release "$prev" --upgrade-to "$new" --data-dir "$DATA_DIR")
  dest="$(existing BACKUP_DIR)"
  if [ -n "$dest" ]; then args+=(--dest "$dest"); fi
  if [ -n "$ROOT" ]; then args+=(--root "$ROOT"); fi
  if [ "$DRY_RUN" = 1 ]; then args+=(--dry-run); fi
  show_cmd bash "$HERE/backup.sh" "${args[@]}"
  if ! STEP_PARENT="$STEP_NO" bash "$HERE/backup.sh" "${args[@]}"; then
    upgrade_resume
    die "the pre-upgrade backup failed (above), so the upgrade was not applied: $APP_DIR/current still points at $prev and the bot runs as before; fix the cause and run install.sh again"
  fi
}
