#!/usr/bin/env bash
# disk-layout.sh — create docket's directories by purpose, with owners and modes, and check
# that the file system has room for the configured download budget.
#
# Usage: disk-layout.sh [--dry-run] [--root DIR] [--env-file FILE] [--data-dir DIR]
#                       [--bot-api-dir DIR] [--bot-api-temp-dir DIR]
#                       [--mode cloud|local] [--budget SIZE] [--no-space-check | --check-only]
#
# Layout (DATA_DIR defaults to /var/lib/docket):
#   DATA_DIR/               docket:docket        0750
#   DATA_DIR/db             docket:docket        0750  SQLite file docket.sqlite (+ -wal, -shm)
#   DATA_DIR/downloads      docket:docket        0750  .part files and fetched sources
#   DATA_DIR/work           docket:docket        0750  processing intermediates
#   DATA_DIR/results        docket:docket        0750  results kept until expires_at
#   DATA_DIR/backups        docket:docket        0750  backup.sh output
#   LOCAL_BOT_API_DIR       docket-botapi:docket-botapi  0750  local mode: the server's --dir
#                           (default DATA_DIR/bot-api)
#   BOT_API_TEMP_DIR        docket-botapi:docket-botapi  0750  local mode: the server's --temp-dir
#                           (default DATA_DIR/bot-api-temp)
# The local Bot API server runs as docket-botapi (compose: user UID:GID); the bot reads its files
# through the group docket-botapi (docs/local-mode.md#permissions). A Bot API directory owned by
# someone else (uid/gid 101 of older installs) is handed over recursively, once.
# Accounts are looked up in ROOT's /etc/passwd and /etc/group with --root (install.sh creates
# them there), else on the host.
#
# Space check, per file system: the one holding DATA_DIR needs DOWNLOAD_BUDGET free (downloads
# and work), and in local mode the one holding LOCAL_BOT_API_DIR needs DOWNLOAD_BUDGET more (the
# server keeps its own copy of every file for up to ~25 h): twice the budget when both are on
# one disk. Exit 3 when short, naming the directory and the file system.
# Values come from flags, else the env file (default /etc/docket/docket.env), else defaults.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

ENV_FILE=/etc/docket/docket.env
DATA_DIR_ARG="" MODE_ARG="" BUDGET_ARG="" SPACE_CHECK=1 CHECK_ONLY=0 BOT_API_DIR_ARG="" BOT_API_TEMP_DIR_ARG=""
DOCKET_USER=docket DOCKET_GROUP=docket
BOT_API_USER=docket-botapi BOT_API_GROUP=docket-botapi

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --root) ROOT="$(arg_value "$1" "${2-}")"; shift ;;
    --env-file) ENV_FILE="$(arg_value "$1" "${2-}")"; shift ;;
    --data-dir) DATA_DIR_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --bot-api-dir) BOT_API_DIR_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --bot-api-temp-dir) BOT_API_TEMP_DIR_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --mode) MODE_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --budget) BUDGET_ARG="$(arg_value "$1" "${2-}")"; shift ;;
    --no-space-check) SPACE_CHECK=0 ;;
    --check-only) CHECK_ONLY=1 ;; # the free-space check alone (install.sh's preflight), no directories
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
normalize_root

env_path="$(rp "$ENV_FILE")"
from_env() { env_get "$env_path" "$1"; }

DATA_DIR="${DATA_DIR_ARG:-$(from_env DATA_DIR)}"
DATA_DIR="${DATA_DIR:-/var/lib/docket}"
MODE="${MODE_ARG:-$(from_env BOT_API_MODE)}"
MODE="${MODE:-cloud}"
BOT_API_DIR="${BOT_API_DIR_ARG:-$(from_env LOCAL_BOT_API_DIR)}"
BOT_API_DIR="${BOT_API_DIR:-$DATA_DIR/bot-api}"
BOT_API_TEMP_DIR="${BOT_API_TEMP_DIR_ARG:-$(from_env BOT_API_TEMP_DIR)}"
BOT_API_TEMP_DIR="${BOT_API_TEMP_DIR:-$DATA_DIR/bot-api-temp}"
# DOWNLOAD_BUDGET is the bot's own key (units allowed); DOWNLOAD_BUDGET_BYTES is accepted as an alias.
BUDGET_RAW="${BUDGET_ARG:-$(from_env DOWNLOAD_BUDGET)}"
BUDGET_RAW="${BUDGET_RAW:-$(from_env DOWNLOAD_BUDGET_BYTES)}"
BUDGET_RAW="${BUDGET_RAW:-4GB}"

case "$MODE" in cloud | local) ;; *) die "--mode must be cloud or local, not '$MODE'" ;; esac
case "$DATA_DIR" in /*) ;; *) die "DATA_DIR must be absolute, not '$DATA_DIR'" ;; esac
BUDGET="$(parse_bytes "$BUDGET_RAW")" || die "DOWNLOAD_BUDGET '$BUDGET_RAW' is not a size like 4GB or 2000MB"

# ensure_dir PATH MODE OWNER:GROUP [handover] — mkdir -p, then mode and owner (account names,
# resolved by chown_named). With "handover", a directory holding anything owned by someone else
# is chowned recursively: the server's files of an older layout (uid/gid 101), or a bot folder
# copied from another host, pass to the new owner.
ensure_dir() {
  local path="$1" mode="$2" owner="$3" handover="${4:-}" real uid gid other rel existed=0
  real="$(rp "$path")"
  if [ -d "$real" ]; then
    log "  = $path exists"
    existed=1
  else
    run mkdir -p "$real"
  fi
  run chmod "$mode" "$real"
  if [ -n "$handover" ] && [ "$existed" = 1 ]; then
    uid="$(account_id user "${owner%%:*}")"
    gid="$(account_id group "${owner#*:}")"
    # Anything in it owned by another uid or gid (the directory itself, or a bot folder copied
    # from another host) goes to the server's account.
    other="$(find "$real" \( ! -uid "${uid:-0}" -o ! -gid "${gid:-0}" \) -printf '%U:%G %P\n' -quit 2>/dev/null || true)"
    if [ -z "$uid" ] || [ -n "$other" ]; then
      rel="${other#* }"
      log "  $path: ${rel:-the directory itself} belongs to ${other%% *}: handing it and everything in it to $owner"
      chown_named -R "$owner" "$real"
      return 0
    fi
  fi
  chown_named "$owner" "$real"
}

# fs_of PATH — an id of the file system that holds PATH (or would: its nearest existing ancestor).
fs_of() {
  local p="$1"
  while [ ! -e "$p" ] && [ "$p" != "/" ]; do p="$(dirname "$p")"; done
  stat -c '%d' "$p"
}

if [ "$CHECK_ONLY" = 0 ]; then
step "directories by purpose under $DATA_DIR (mode $MODE)"
ensure_dir "$DATA_DIR" 0750 "$DOCKET_USER:$DOCKET_GROUP"
for sub in db downloads work results backups; do
  ensure_dir "$DATA_DIR/$sub" 0750 "$DOCKET_USER:$DOCKET_GROUP"
done
if [ "$MODE" = local ]; then
  ensure_dir "$BOT_API_DIR" 0750 "$BOT_API_USER:$BOT_API_GROUP" handover
  ensure_dir "$BOT_API_TEMP_DIR" 0750 "$BOT_API_USER:$BOT_API_GROUP" handover
else
  skip "Bot API server directories (cloud mode)"
fi
fi

step "free space for the download budget"
# Needs per file system: DATA_DIR's holds downloads + work; in local mode LOCAL_BOT_API_DIR's
# holds the server's copies as well (one budget more, on whichever disk that is).
declare -A need=() where=()
add_need() { # add_need PATH BYTES
  local fs
  fs="$(fs_of "$(rp "$1")")"
  need[$fs]=$((${need[$fs]:-0} + $2))
  where[$fs]="${where[$fs]:+${where[$fs]} and }$1"
}
add_need "$DATA_DIR" "$BUDGET"
if [ "$MODE" = local ]; then add_need "$BOT_API_DIR" "$BUDGET"; fi
short=0
for fs in "${!need[@]}"; do
  first="${where[$fs]%% and *}"
  have="$(free_bytes "$(rp "$first")")"
  log "  ${where[$fs]}: needs $(human_bytes "${need[$fs]}") free (budget $(human_bytes "$BUDGET"), $BUDGET_RAW); $(human_bytes "$have") available"
  if [ "$have" -lt "${need[$fs]}" ]; then
    if [ "$SPACE_CHECK" = 1 ]; then
      printf 'error: not enough free space on the file system of %s: %s available, %s needed (DOWNLOAD_BUDGET=%s, mode %s); lower --download-budget (DOWNLOAD_BUDGET) or grow the disk, or put the data on a larger disk with --data-dir\n' \
        "${where[$fs]}" "$have" "${need[$fs]}" "$BUDGET_RAW" "$MODE" >&2
      short=1
    else
      warn "not enough free space for ${where[$fs]} ($have < ${need[$fs]} bytes); continuing because of --no-space-check"
    fi
  fi
done
if [ "$short" = 1 ]; then exit 3; fi
if [ "$CHECK_ONLY" = 0 ]; then log "disk layout ok"; fi
