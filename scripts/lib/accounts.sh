# shellcheck shell=bash
# shellcheck disable=SC2034 # the functions set install.sh globals
# scripts/lib/accounts.sh — install.sh's accounts and data directories (sourced by install.sh only;
# it uses install.sh's settings: ROOT, ETC, UNIT_DIR, DATA_DIR, the account names, existing()).

# resolve_data_dirs — DATA_DIR and the local server's directories under it (issue 9 item 6): the
# Bot API --dir and --temp-dir follow DATA_DIR unless docket.env names a place of their own.
# Moving an existing data directory is refused: install.sh never moves a database.
resolve_data_dirs() {
  local old_data old_api old_temp
  old_data="$(existing DATA_DIR)"
  [ -n "$old_data" ] || old_data="$DEFAULT_DATA_DIR"
  DATA_DIR="${DATA_DIR:-$old_data}"
  case "$DATA_DIR" in /*) ;; *) die "--data-dir '$DATA_DIR' must be an absolute path, e.g. /srv/docket" ;; esac
  DATA_DIR="${DATA_DIR%/}"
  if [ "$DATA_DIR" != "$old_data" ] && [ -e "$(rp "$old_data/db/docket.sqlite")" ]; then
    die "--data-dir $DATA_DIR: the data of this bot is in $old_data (DATA_DIR in $ETC/docket.env) and install.sh does not move it. Stop docket (systemctl stop docket.service docket-janitor.timer docket-backup.timer), move the directory (mv $old_data $DATA_DIR, or rsync -aHAX $old_data/ $DATA_DIR/ to another disk), then run install.sh --data-dir $DATA_DIR again (docs/install.md#moving-the-data-directory)"
  fi
  old_api="$(existing LOCAL_BOT_API_DIR)"
  old_temp="$(existing BOT_API_TEMP_DIR)"
  if [ -z "$old_api" ] || [ "$old_api" = "$old_data/bot-api" ]; then BOT_API_DIR="$DATA_DIR/bot-api"; else BOT_API_DIR="$old_api"; fi
  if [ -z "$old_temp" ] || [ "$old_temp" = "$old_data/bot-api-temp" ]; then BOT_API_TEMP_DIR="$DATA_DIR/bot-api-temp"; else BOT_API_TEMP_DIR="$old_temp"; fi
}

# setup_accounts — the bot's user and the local Bot API server's own user and group (issue 9
# item 7). The group is docket's own, never one that merely has the gid the image uses: the
# container runs with this user's uid and this group's gid, so both sides agree on the numbers.
setup_accounts() {
  local adb dropin_old borrowed
  if [ -n "$ROOT" ]; then
    # A throwaway root keeps its own account database; the shadow tools edit it through --prefix.
    [ -e "$(rp /etc/passwd)" ] || printf 'root:x:0:0:root:/root:/bin/sh\n' | write_file 0644 "$(rp /etc/passwd)"
    [ -e "$(rp /etc/group)" ] || printf 'root:x:0:\n' | write_file 0644 "$(rp /etc/group)"
    for adb in shadow gshadow; do
      [ -e "$(rp "/etc/$adb")" ] || write_file 0640 "$(rp "/etc/$adb")" </dev/null
    done
  fi
  if [ -n "$(account_id group "$BOT_API_GROUP")" ]; then
    log "  = group $BOT_API_GROUP exists (gid $(account_id group "$BOT_API_GROUP"))"
  else
    account_tool groupadd --system "$BOT_API_GROUP"
  fi
  if [ -n "$(account_id user "$BOT_API_USER")" ]; then
    log "  = user $BOT_API_USER exists (uid $(account_id user "$BOT_API_USER"))"
  else
    account_tool useradd --system --gid "$BOT_API_GROUP" --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin --comment "docket local Bot API server" "$BOT_API_USER"
  fi
  if [ -n "$(account_id user "$DOCKET_USER")" ]; then
    log "  = user $DOCKET_USER exists"
  else
    account_tool useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home \
      --shell /usr/sbin/nologin --comment "docket Telegram bot" "$DOCKET_USER"
  fi
  if group_has_member "$BOT_API_GROUP" "$DOCKET_USER"; then
    log "  = $DOCKET_USER is in group $BOT_API_GROUP"
  else
    account_tool usermod -a -G "$BOT_API_GROUP" "$DOCKET_USER"
  fi
  # Older installs joined whatever group held gid 101 (_ssh, systemd-journal…) and recorded it in
  # a drop-in: leave that group and drop the drop-in (the units name docket-botapi again).
  dropin_old="$(rp "$UNIT_DIR/docket.service.d/10-botapi-group.conf")"
  if [ -f "$dropin_old" ]; then
    borrowed="$(sed -n 's/^SupplementaryGroups=\(..*\)$/\1/p' "$dropin_old" | tail -n1)"
    if [ -n "$borrowed" ] && [ "$borrowed" != "$BOT_API_GROUP" ] && group_has_member "$borrowed" "$DOCKET_USER"; then
      log "  $DOCKET_USER leaves group $borrowed (joined by an older install because it had gid 101)"
      account_tool usermod -r -G "$borrowed" "$DOCKET_USER"
    fi
    run rm -f "$dropin_old" "$(rp "$UNIT_DIR/docket-janitor.service.d/10-botapi-group.conf")"
  fi
  BOT_API_UID="$(account_id user "$BOT_API_USER")"
  BOT_API_GID="$(account_id group "$BOT_API_GROUP")"
}
