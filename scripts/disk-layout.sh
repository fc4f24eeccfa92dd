#!/usr/bin/env bash
# disk-layout.sh — create docket's directories by purpose, with owners and modes, and check
# that the file system has room for the configured download budget.
#
# Usage: disk-layout.sh [--dry-run] [--root DIR] [--env-file FILE] [--data-dir DIR]
#                       [--mode cloud|local] [--budget SIZE] [--no-space-check]
#
# Layout (DATA_DIR defaults to /var/lib/docket):
#   DATA_DIR/               docket:docket        0750
#   DATA_DIR/db             docket:docket        0750  SQLite file docket.sqlite (+ -wal, -shm)
#   DATA_DIR/downloads      docket:docket        0750  .part files and fetched sources
#   DATA_DIR/work           docket:docket        0750  processing intermediates
#   DATA_DIR/results        docket:docket        0750  results kept until expires_at
#   DATA_DIR/backups        docket:docket        0750  backup.sh output
#   LOCAL_BOT_API_DIR       101:101              0750  local mode: the Bot API server's --dir
#   BOT_API_TEMP_DIR        101:101              0750  local mode: the server's --temp-dir
# The Bot API directories belong to uid/gid 101 (the server user in the aiogram image); the
# bot reads them through its supplementary group (see docs/local-mode.md).
#
# Space check: the file system of DATA_DIR must have DOWNLOAD_BUDGET free (twice that in local
# mode, where the server keeps its own copy of every file for up to ~25 h). Exit 3 when short.
# Values come from flags, else the env file (default /etc/docket/docket.env), else defaults.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

ENV_FILE=/etc/docket/docket.env
DATA_DIR_ARG="" MODE_ARG="" BUDGET_ARG="" SPACE_CHECK=1
DOCKET_USER="${DOCKET_USER:-docket}"
DOCKET_GROUP="${DOCKET_GROUP:-docket}"
BOT_API_UID="${BOT_API_UID:-101}"
BOT_API_GID="${BOT_API_GID:-101}"

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --root) ROOT="${2:?--root needs a directory}"; shift ;;
    --env-file) ENV_FILE="${2:?}"; shift ;;
    --data-dir) DATA_DIR_ARG="${2:?}"; shift ;;
    --mode) MODE_ARG="${2:?}"; shift ;;
    --budget) BUDGET_ARG="${2:?}"; shift ;;
    --no-space-check) SPACE_CHECK=0 ;;
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
BOT_API_DIR="$(from_env LOCAL_BOT_API_DIR)"
BOT_API_DIR="${BOT_API_DIR:-/var/lib/docket/bot-api}"
BOT_API_TEMP_DIR="$(from_env BOT_API_TEMP_DIR)"
BOT_API_TEMP_DIR="${BOT_API_TEMP_DIR:-/var/lib/docket/bot-api-temp}"
# DOWNLOAD_BUDGET is the bot's own key (units allowed); DOWNLOAD_BUDGET_BYTES is accepted as an alias.
BUDGET_RAW="${BUDGET_ARG:-$(from_env DOWNLOAD_BUDGET)}"
BUDGET_RAW="${BUDGET_RAW:-$(from_env DOWNLOAD_BUDGET_BYTES)}"
BUDGET_RAW="${BUDGET_RAW:-4GB}"

case "$MODE" in cloud | local) ;; *) die "--mode must be cloud or local, not '$MODE'" ;; esac
case "$DATA_DIR" in /*) ;; *) die "DATA_DIR must be absolute, not '$DATA_DIR'" ;; esac
BUDGET="$(parse_bytes "$BUDGET_RAW")" || die "DOWNLOAD_BUDGET '$BUDGET_RAW' is not a size like 4GB or 2000MB"

# ensure_dir PATH MODE OWNER:GROUP — mkdir -p, then mode and owner (owner only when it resolves).
ensure_dir() {
  local path="$1" mode="$2" owner="$3" user="${3%%:*}"
  local real
  real="$(rp "$path")"
  if [ -d "$real" ]; then
    log "  = $path exists"
  else
    run mkdir -p "$real"
  fi
  run chmod "$mode" "$real"
  if [[ "$user" =~ ^[0-9]+$ ]] || user_exists "$user"; then
    run chown "$owner" "$real"
  else
    skip "chown $owner $path (user $user does not exist on this host)"
  fi
}

step "directories by purpose under $DATA_DIR (mode $MODE)"
ensure_dir "$DATA_DIR" 0750 "$DOCKET_USER:$DOCKET_GROUP"
for sub in db downloads work results backups; do
  ensure_dir "$DATA_DIR/$sub" 0750 "$DOCKET_USER:$DOCKET_GROUP"
done
if [ "$MODE" = local ]; then
  ensure_dir "$BOT_API_DIR" 0750 "$BOT_API_UID:$BOT_API_GID"
  ensure_dir "$BOT_API_TEMP_DIR" 0750 "$BOT_API_UID:$BOT_API_GID"
else
  skip "Bot API server directories (cloud mode)"
fi

step "free space for the download budget"
need="$BUDGET"
if [ "$MODE" = local ]; then need=$((BUDGET * 2)); fi
have="$(free_bytes "$(rp "$DATA_DIR")")"
log "  budget $(human_bytes "$BUDGET") ($BUDGET_RAW), needs $(human_bytes "$need") free; $(human_bytes "$have") available"
if [ "$have" -lt "$need" ]; then
  if [ "$SPACE_CHECK" = 1 ]; then
    printf 'error: not enough free space on the file system of %s: %s available, %s needed (DOWNLOAD_BUDGET=%s, mode %s); lower DOWNLOAD_BUDGET or grow the disk\n' \
      "$DATA_DIR" "$have" "$need" "$BUDGET_RAW" "$MODE" >&2
    exit 3
  fi
  warn "not enough free space ($have < $need bytes); continuing because of --no-space-check"
fi
log "disk layout ok"
