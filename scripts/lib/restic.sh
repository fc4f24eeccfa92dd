# shellcheck shell=bash
# scripts/lib/restic.sh — off-box backups with restic (Debian package `restic`), for backup.sh and
# restore.sh. Sourced after common.sh (uses rp, log, warn). Never sourced alone.
#
# Configuration, all in /etc/docket (docs/backup.md):
#   /etc/docket/restic.env       RESTIC_REPOSITORY (any restic backend: sftp:…, s3:…, rest:…, b2:…,
#                                a local path) or RESTIC_REPOSITORY_FILE, RESTIC_PASSWORD_FILE
#                                (default /etc/docket/restic-password), and the backend's own
#                                variables (AWS_ACCESS_KEY_ID …). docket-backup.service loads it
#                                (EnvironmentFile=); a run by hand reads it here (parsed, never
#                                sourced). Mode 0600, owner root.
#   /etc/docket/restic-password  the repository password. The units hand it to the service as a
#                                systemd credential (LoadCredential=restic-password), so it stays
#                                root's 0600 file and the bot, which runs as the same user, never
#                                sees it; a run started by root passes it on in the environment
#                                (RESTIC_PASSWORD) to the user it continues as.
#   BACKUP_RESTIC_HOST           the host name recorded in snapshots (default "docket", so a new
#                                VPS with another hostname finds and rotates the same snapshots)
#   BACKUP_KEEP_DAILY / _WEEKLY / _MONTHLY   restic forget's retention (7 / 4 / 6)
#   BACKUP_RESTIC_SFTP_COMMAND   optional ssh command for an sftp: repository (restic -o sftp.command=)
# No repository configured = local backups only (the local rotation works the same either way).

RESTIC_ENV_FILE="${RESTIC_ENV_FILE:-/etc/docket/restic.env}"
# RESTIC replaces the restic binary (tests: one that is missing).
RESTIC_CMD="${RESTIC:-restic}"
RESTIC_FLAGS=()

# restic_load_config — export the keys of restic.env that the environment does not set yet, and
# find the password. Sets RESTIC_ON=1 when a repository is configured.
restic_load_config() {
  local file line key value cache
  file="$(rp "$RESTIC_ENV_FILE")"
  # A run that root handed on to another user has it all in its environment already.
  if [ "${DOCKET_RESTIC_LOADED:-}" = 1 ]; then
    file=""
  elif [ -r "$file" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
      [[ "$line" =~ ^[[:space:]]*([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]] || continue
      key="${BASH_REMATCH[1]}"
      value="${BASH_REMATCH[2]}"
      value="${value%\"}" value="${value#\"}" value="${value%\'}" value="${value#\'}"
      if [ -z "${!key+set}" ]; then export "$key=$value"; fi
    done <"$file"
  fi
  RESTIC_ON=0
  if [ -n "${RESTIC_REPOSITORY:-}${RESTIC_REPOSITORY_FILE:-}" ]; then RESTIC_ON=1; fi
  # shellcheck disable=SC2034 # used by the scripts that source this file
  RESTIC_HOST="${BACKUP_RESTIC_HOST:-docket}"
  if [ "${DOCKET_RESTIC_LOADED:-}" != 1 ]; then
    if [ -n "${RESTIC_REPOSITORY_FILE:-}" ]; then RESTIC_REPOSITORY_FILE="$(rp "$RESTIC_REPOSITORY_FILE")" && export RESTIC_REPOSITORY_FILE; fi
    # The password: the systemd credential, else RESTIC_PASSWORD (set by the operator), else the file.
    # (The units' fallback for a missing file is one NUL byte: no password there.)
    if [ -n "${CREDENTIALS_DIRECTORY:-}" ] && [ -n "$(tr -d '\000' <"$CREDENTIALS_DIRECTORY/restic-password" 2>/dev/null)" ]; then
      export RESTIC_PASSWORD_FILE="$CREDENTIALS_DIRECTORY/restic-password"
    elif [ -z "${RESTIC_PASSWORD:-}" ]; then
      RESTIC_PASSWORD_FILE="$(rp "${RESTIC_PASSWORD_FILE:-/etc/docket/restic-password}")"
      export RESTIC_PASSWORD_FILE
    fi
    export DOCKET_RESTIC_LOADED=1
  fi
  RESTIC_FLAGS=()
  if [ -n "${BACKUP_RESTIC_SFTP_COMMAND:-}" ]; then RESTIC_FLAGS+=(-o "sftp.command=$BACKUP_RESTIC_SFTP_COMMAND"); fi
  # The cache is the docket user's (CacheDirectory=docket); root, restoring by hand, uses none.
  cache="${RESTIC_CACHE_DIR:-$(rp /var/cache/docket)/restic}"
  if [ "$(id -u)" != 0 ] && mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; then
    RESTIC_FLAGS+=(--cache-dir "$cache")
  else
    RESTIC_FLAGS+=(--no-cache)
  fi
}

# restic_where — the repository as it may be shown: credentials in a URL become ***.
restic_where() {
  local repo="${RESTIC_REPOSITORY:-}"
  if [ -z "$repo" ] && [ -n "${RESTIC_REPOSITORY_FILE:-}" ]; then repo="(from $RESTIC_REPOSITORY_FILE)"; fi
  printf '%s' "$repo" | sed -E 's#(://)[^/@]*@#\1***@#'
}

# restic_pass_password — before a root run continues as another user: read the password file
# (root's 0600) into RESTIC_PASSWORD, which that user's restic then takes from the environment.
restic_pass_password() {
  if [ "$RESTIC_ON" = 1 ] && [ -z "${RESTIC_PASSWORD:-}" ] && [ -r "${RESTIC_PASSWORD_FILE:-}" ] &&
    [[ "$RESTIC_PASSWORD_FILE" != "${CREDENTIALS_DIRECTORY:-/nonexistent}"/* ]]; then
    RESTIC_PASSWORD="$(cat "$RESTIC_PASSWORD_FILE")"
    export RESTIC_PASSWORD
    unset RESTIC_PASSWORD_FILE
  fi
}

# restic_check_ready — "" when restic can be run, else the one line that says what is missing.
restic_check_ready() {
  if ! command -v "$RESTIC_CMD" >/dev/null 2>&1; then
    printf 'restic is not installed (apt-get install restic), so no off-box copy was made'
  elif [ -z "${RESTIC_PASSWORD:-}" ] && [ ! -r "${RESTIC_PASSWORD_FILE:-}" ]; then
    printf 'the restic password file %s is missing or not readable (create it: install -m 0600 /dev/stdin /etc/docket/restic-password)' "${RESTIC_PASSWORD_FILE:-}"
  fi
}

# restic_explain STDERR_FILE — one line naming the cause of a failed restic command.
restic_explain() {
  local err="$1" fatal
  fatal="$(grep -m1 '^Fatal: ' "$err" 2>/dev/null | sed 's/^Fatal: //')"
  fatal="${fatal:-$(tail -n1 "$err" 2>/dev/null)}"
  if grep -q 'wrong password or no key found' "$err"; then
    printf 'restic: wrong password for repository %s (the password in %s does not open it)' "$(restic_where)" "${RESTIC_PASSWORD_FILE:-\$RESTIC_PASSWORD}"
  elif grep -qE 'unable to open config file|Is there a repository at the following location|unable to open repository' "$err"; then
    printf 'restic: cannot open repository %s: %s (unreachable, or not initialised yet: backup.sh --init-restic)' "$(restic_where)" "$(printf '%s' "$fatal" | sed -E 's#(://)[^/@]*@#\1***@#')"
  elif grep -q 'repository is already locked' "$err"; then
    printf 'restic: repository %s is locked by another run (if that run is dead: restic unlock)' "$(restic_where)"
  else
    printf 'restic failed: %s' "$(printf '%s' "${fatal:0:300}" | sed -E 's#(://)[^/@]*@#\1***@#')"
  fi
}

# restic_run ARG… — restic with the flags above; stderr goes to $RESTIC_ERR (set by the caller).
restic_run() { "$RESTIC_CMD" "${RESTIC_FLAGS[@]}" "$@" 2>"$RESTIC_ERR"; }

# restic_restore SNAPSHOT TARGET — `restic restore SNAPSHOT --target TARGET`. restic 0.14 (Debian 12)
# draws no progress of its own for a restore, so on a terminal the bytes restored so far (the size of
# TARGET, against the snapshot's restore size from `restic stats`) are redrawn in place every second;
# off a terminal (the journal) nothing is printed. Issue 10 item 6: "progress on a TTY, quiet in the journal".
restic_restore() {
  local snap="$1" target="$2" total pid status
  if [ ! -t 2 ]; then
    restic_run restore "$snap" --target "$target" >/dev/null
    return
  fi
  total="$(restic_run stats --mode restore-size --json "$snap" | sed -n 's/.*"total_size":\([0-9]*\).*/\1/p')" || total=""
  restic_run restore "$snap" --target "$target" >/dev/null &
  pid=$!
  while :; do
    restore_progress_line "$target" "$total"
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  status=0
  wait "$pid" || status=$?
  if [ "$status" = 0 ]; then restore_progress_line "$target" "$total"; fi
  printf '\r\033[K' >&2
  return "$status"
}

# restore_progress_line DIR TOTAL — "  restic restore: 12.0 MiB of 40.0 MiB (30 %)", redrawn in place.
restore_progress_line() {
  local got
  got="$(du -sb "$1" 2>/dev/null | cut -f1)"
  awk -v got="${got:-0}" -v total="${2:-0}" 'function mib(b) { return sprintf("%.1f MiB", b / 1048576) }
    BEGIN {
      if (total > 0) { if (got > total) got = total; printf "\r\033[K  restic restore: %s of %s (%d %%)", mib(got), mib(total), got * 100 / total }
      else printf "\r\033[K  restic restore: %s", mib(got)
    }' >&2
}
