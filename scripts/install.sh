#!/usr/bin/env bash
# install.sh — install or update docket on a fresh Debian/Ubuntu VPS with one command.
#
# Usage: (as root, from an unpacked docket source tree)
#   scripts/install.sh [options]
#
# Options:
#   --mode cloud|local       Bot API mode (default: the current BOT_API_MODE, else cloud)
#   --token-file FILE        read the bot token from FILE ("-" = stdin); else $BOT_TOKEN,
#                            else the existing docket.env, else a hidden prompt (read -s)
#   --api-id ID              local mode: api_id from my.telegram.org
#   --api-hash-file FILE     local mode: file holding api_hash (else $TELEGRAM_API_HASH or a prompt)
#   --data-dir DIR           data root (default /var/lib/docket)
#   --http-port PORT         127.0.0.1 port of /healthz and /metrics (default 8090)
#   --download-budget SIZE   DOWNLOAD_BUDGET, e.g. 4GB (default 4GB)
#   --allowed-users IDS      ALLOWED_USER_IDS: comma-separated Telegram user ids that may use the
#                            bot (default: kept from docket.env; empty = every Telegram user)
#   --webhook-url URL        webhook mode: public URL Telegram posts updates to (WEBHOOK_URL),
#                            https://HOST[:443]/PATH; nginx (compose/webhook.yml) serves exactly
#                            PATH on :443 and the bot listens on it (WEBHOOK_PATH = PATH)
#   --webhook                webhook mode with the WEBHOOK_URL already in docket.env (a first
#                            webhook install needs --webhook-url)
#   --no-webhook             back to long polling: removes the WEBHOOK_* keys and the nginx
#                            include, stops nginx (the bot deletes the webhook when it starts)
#   --webhook-port PORT      the bot's webhook listener on 127.0.0.1 (default 8091)
#   --bot-api-port PORT      local mode: the local Bot API server on 127.0.0.1 (default 8081)
#   --tls-cert FILE --tls-key FILE   certificate chain and key for nginx (PEM, on this host;
#                            default /etc/docket/tls/{fullchain,privkey}.pem); must be a pair;
#                            nginx gets copies in /etc/docket/nginx/tls (certbot deploy hook)
#   --logout-cloud           first install in local mode: call logOut on api.telegram.org once
#                            the local server is healthy, then start the bot (without it the bot
#                            is not started and the run says what to do). A move between modes
#                            of an installed bot (--mode other than the current one) is done by
#                            `docket mode`, which logs out only after it stopped the service
#   --database-url URL       PostgreSQL instead of the SQLite file (several hosts: docs/scaling.md),
#                            postgres://USER@HOST:PORT/DATABASE without the password: that comes
#                            from $PGPASSWORD, else the existing docket.env, else a hidden prompt
#   --role all|intake|worker DOCKET_ROLE (default: kept, else all); intake and worker need PostgreSQL;
#                            --role worker sets up a worker host (downloads and processes, never
#                            receives updates)
#   --skip-packages          do not run apt-get/npm (Bun, Docker, Compose and sqlite3 must exist)
#   --no-start               install everything (images pulled) but enable and start no unit
#                            (no health check)
#   --non-interactive        never prompt; fail if a required value is missing
#   --dry-run                print every step and command, change nothing; checks the same inputs
#                            as a real run and exits 1 if the real run would stop on one of them
#   --root DIR               install into a throwaway root (tests): accounts in ROOT's own
#                            /etc/passwd and /etc/group; no apt, docker, systemctl or port check
#                            unless replaced through the variables below
#   -h, --help
#
# Replaceable commands (tests, unusual hosts): SYSTEMCTL, DOCKER_COMPOSE, APT_GET, NPM, CURL, SS
# (the port check), DOCKET_CLI (the `docket` operator command), e.g. SYSTEMCTL=/bin/true;
# TELEGRAM_CLOUD_ROOT (the logOut target, tests). HEALTH_TIMEOUT (seconds, default 60) bounds the
# wait for the local Bot API server and the final health checks.
# Everything printed also goes to /var/log/docket/install.log (no secret is ever printed).
#
# Changing the mode of an installed bot (docket.env says cloud, --mode local, or the reverse):
# docket.env keeps the old BOT_API_MODE/BOT_API_ROOT, the new server is started, and then
# `docket mode NEW` stops the service, deletes the webhook, logs out of the cloud (or closes on
# the local server), checks the new server and rewrites the two keys (docs/local-mode.md).
#
# Idempotent: a second run keeps docket.env (only changed flags are applied), reuses the
# release directory when the source is unchanged, and restarts the service. Run from an
# installed release (/opt/docket/releases/X/scripts/install.sh) it reuses release X: that is
# the rollback (docs/upgrading.md).
# Exit codes: 1 usage/precondition (named flag or file and what to do), 3 not enough disk space,
# 4 a service did not come up (local server, nginx, /healthz, the webhook), 5 logOut refused.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(cd "$HERE/.." && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=scripts/lib/accounts.sh
. "$HERE/lib/accounts.sh"
# shellcheck source=scripts/lib/units.sh
. "$HERE/lib/units.sh"
# shellcheck source=scripts/lib/containers.sh
. "$HERE/lib/containers.sh"
# shellcheck source=scripts/lib/webhook.sh
. "$HERE/lib/webhook.sh"
# shellcheck source=scripts/lib/services.sh
. "$HERE/lib/services.sh"
# shellcheck source=scripts/lib/preflight.sh
. "$HERE/lib/preflight.sh"
# shellcheck source=scripts/lib/release.sh
. "$HERE/lib/release.sh"
# shellcheck source=scripts/lib/upgrade.sh
. "$HERE/lib/upgrade.sh"
# shellcheck source=scripts/lib/scaling.sh
. "$HERE/lib/scaling.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

ETC=/etc/docket
APP_DIR=/opt/docket
UNIT_DIR=/etc/systemd/system
DEFAULT_DATA_DIR=/var/lib/docket
DOCKET_USER=docket
# The local Bot API server runs as this user and group (compose: user UID:GID); the bot reads its
# files through the group (docs/local-mode.md#permissions).
BOT_API_USER=docket-botapi
BOT_API_GROUP=docket-botapi
BOT_API_UID="" BOT_API_GID="" # set by setup_accounts (empty in a dry run of a fresh host)
BOT_API_PORT="" # --bot-api-port, else DOCKET_BOT_API_PORT in compose.env, else 8081
WEBHOOK_PATH=""
HEALTH_TIMEOUT="${HEALTH_TIMEOUT:-60}"

MODE="" TOKEN_FILE="" API_ID="" API_HASH_FILE="" DATA_DIR="" HTTP_PORT="" BUDGET="" ALLOWED_USERS=""
WEBHOOK=0 NO_WEBHOOK=0 WEBHOOK_URL="" WEBHOOK_PORT="" TLS_CERT="" TLS_KEY="" LOGOUT_CLOUD=0
SKIP_PACKAGES=0 NO_START=0 INTERACTIVE=1

ORIG_ARGS="$*" # for the install log (no secret is ever an argument)
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) MODE="$(arg_value "$1" "${2-}")"; shift ;;
    --token-file) TOKEN_FILE="$(arg_value "$1" "${2-}")"; shift ;;
    --api-id) API_ID="$(arg_value "$1" "${2-}")"; shift ;;
    --api-hash-file) API_HASH_FILE="$(arg_value "$1" "${2-}")"; shift ;;
    --data-dir) DATA_DIR="$(arg_value "$1" "${2-}")"; shift ;;
    --http-port) HTTP_PORT="$(arg_value "$1" "${2-}")"; shift ;;
    --download-budget) BUDGET="$(arg_value "$1" "${2-}")"; shift ;;
    --allowed-users) ALLOWED_USERS="$(arg_value "$1" "${2-}")"; shift ;;
    --webhook) WEBHOOK=1 ;;
    --no-webhook) NO_WEBHOOK=1 ;;
    --webhook-url) WEBHOOK_URL="$(arg_value "$1" "${2-}")"; WEBHOOK=1; shift ;;
    --webhook-port) WEBHOOK_PORT="$(arg_value "$1" "${2-}")"; shift ;;
    --bot-api-port) BOT_API_PORT="$(arg_value "$1" "${2-}")"; shift ;;
    --tls-cert) TLS_CERT="$(arg_value "$1" "${2-}")"; shift ;;
    --tls-key) TLS_KEY="$(arg_value "$1" "${2-}")"; shift ;;
    --logout-cloud) LOGOUT_CLOUD=1 ;;
    --database-url) SCALE_URL="${2:?--database-url needs postgres://USER@HOST:PORT/DATABASE}"; shift ;;
    --role) SCALE_ROLE="${2:?--role needs all, intake or worker}"; shift ;;
    --skip-packages) SKIP_PACKAGES=1 ;;
    --no-start) NO_START=1 ;;
    --non-interactive) INTERACTIVE=0 ;;
    --dry-run) DRY_RUN=1 ;;
    --root) ROOT="$(arg_value "$1" "${2-}")"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
normalize_root
# Inputs a real run would stop on: a dry run reports each of them and exits 1 at the end,
# instead of pretending the install would work (a real run dies at the first one).
DRY_PROBLEMS=()
need_input() { # need_input MESSAGE — die, or in a dry run record MESSAGE and go on
  if [ "$DRY_RUN" = 1 ]; then
    printf 'error (dry run; the real run stops here): %s\n' "$*" >&2
    DRY_PROBLEMS+=("$*")
  else
    die "$@"
  fi
}
# Prompts need a terminal (CI has none: then values must come from flags or the environment).
if ! (: </dev/tty) 2>/dev/null; then INTERACTIVE=0; fi

# Host-level commands; in --root mode they are skipped unless the caller supplied a replacement.
host_cmd() { # host_cmd VAR DEFAULT → prints the command to use, or "" to skip
  local var="$1" def="$2" val
  val="${!var:-}"
  if [ -n "$val" ]; then printf '%s' "$val"; return; fi
  if [ -n "$ROOT" ]; then printf ''; return; fi
  printf '%s' "$def"
}
SYSTEMCTL_CMD="$(host_cmd SYSTEMCTL systemctl)"
APT_CMD="$(host_cmd APT_GET apt-get)"
NPM_CMD="$(host_cmd NPM npm)"
CURL_CMD="${CURL:-curl}"
DOCKET_CLI_CMD="$(host_cmd DOCKET_CLI /usr/local/bin/docket)"
SS_CMD="$(host_cmd SS ss)"
# Compose v2 plugin ("docker compose") or v1 ("docker-compose", Debian 12); DOCKER_COMPOSE replaces
# both. In --root mode compose is skipped unless DOCKER_COMPOSE is given.
if [ -n "$ROOT" ] && [ -z "${DOCKER_COMPOSE:-}" ]; then COMPOSE_CMD=(); else compose_client_detect; fi

ENV_FILE="$(rp "$ETC/docket.env")"
existing() { env_get "$ENV_FILE" "$1"; }

# Everything the screen shows goes to the install log as well (secrets are never shown, so never
# logged); a dry run changes nothing, so it writes no log either (issue 9 item 12).
INSTALL_LOG=/var/log/docket/install.log
if [ "$DRY_RUN" != 1 ]; then
  mkdir -p "$(rp "$(dirname "$INSTALL_LOG")")"
  chmod 0750 "$(rp "$(dirname "$INSTALL_LOG")")"
  (umask 077 && touch "$(rp "$INSTALL_LOG")")
  # (tee's own stderr is the screen: a process substitution keeps the stderr it was made with.)
  exec 2> >(exec tee -a "$(rp "$INSTALL_LOG")" >&2)
  tee_pid=$!
  exec 1>&2
  # The log is complete when the script ends: close our ends, let tee write the rest.
  trap 'exec 1>&- 2>&-; wait "$tee_pid" 2>/dev/null || true' EXIT
  printf '\n=== install.sh %s, %s, from %s ===\n' "$ORIG_ARGS" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" "$SRC" >>"$(rp "$INSTALL_LOG")"
  log "log: $INSTALL_LOG"
fi

# ---------------------------------------------------------------------------------------------
step "preflight"
if [ -z "$ROOT" ] && [ "$DRY_RUN" != 1 ] && [ "$(id -u)" -ne 0 ]; then
  die "run as root (sudo scripts/install.sh …), or use --dry-run / --root DIR"
fi
[ -f "$SRC/package.json" ] || die "no package.json in $SRC: run install.sh from a docket source tree"
[ -f "$SRC/bot/main.ts" ] || warn "bot/main.ts is missing in $SRC; the service will not start"
check_os
check_arch

# The mode of an installed bot (empty on a first install: nothing to move away from).
FROM_MODE=""
if [ -r "$ENV_FILE" ] && [ -n "$(existing BOT_TOKEN)" ]; then
  FROM_MODE="$(existing BOT_API_MODE)"
  FROM_MODE="${FROM_MODE:-cloud}"
fi
MODE="${MODE:-$FROM_MODE}"
MODE="${MODE:-cloud}"
case "$MODE" in cloud | local) ;; *) die "--mode must be cloud or local, not '$MODE'" ;; esac
SWITCH=0
if [ -n "$FROM_MODE" ] && [ "$FROM_MODE" != "$MODE" ]; then
  SWITCH=1
  log "  mode change $FROM_MODE -> $MODE: handed to \`docket mode $MODE\` after the new server is up"
  [ "$NO_START" = 0 ] || die "--no-start cannot change the Bot API mode (the service must be stopped and started around it); drop --no-start, or run: docket mode $MODE"
fi
HTTP_PORT="${HTTP_PORT:-$(existing HTTP_PORT)}"
HTTP_PORT="${HTTP_PORT:-8090}"
check_port_value --http-port "$HTTP_PORT" 8090
BUDGET="${BUDGET:-$(existing DOWNLOAD_BUDGET)}"
BUDGET="${BUDGET:-4GB}"
parse_bytes "$BUDGET" >/dev/null || die "--download-budget '$BUDGET' is not a size like 4GB"
# Who may use the bot (bot/config.ts ALLOWED_USER_IDS: empty = every Telegram user).
if [ -n "$ALLOWED_USERS" ]; then
  ALLOWED_USERS="${ALLOWED_USERS//[[:space:]]/}"
  [[ "$ALLOWED_USERS" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--allowed-users '$ALLOWED_USERS' must be comma-separated numeric Telegram user ids, e.g. 12345,67890"
fi
ACCESS_IDS="${ALLOWED_USERS:-$(existing ALLOWED_USER_IDS)}"
resolve_data_dirs
HAD_WEBHOOK=0
if [ "$(existing WEBHOOK_SECRET)" != "" ] || [ "$(existing WEBHOOK_URL)" != "" ]; then HAD_WEBHOOK=1; fi
if [ "$NO_WEBHOOK" = 1 ]; then
  [ "$WEBHOOK" = 0 ] || die "--no-webhook contradicts --webhook/--webhook-url"
elif [ "$HAD_WEBHOOK" = 1 ]; then
  WEBHOOK=1
fi
BOT_API_PORT="${BOT_API_PORT:-$(env_get "$(rp "$ETC/compose.env")" DOCKET_BOT_API_PORT)}"
BOT_API_PORT="${BOT_API_PORT:-8081}"
check_port_value --bot-api-port "$BOT_API_PORT" 8081
WEBHOOK_PORT="${WEBHOOK_PORT:-$(existing WEBHOOK_PORT)}"
WEBHOOK_PORT="${WEBHOOK_PORT:-8091}"
check_port_value --webhook-port "$WEBHOOK_PORT" 8091
if [ "$WEBHOOK" = 1 ]; then
  WEBHOOK_URL="${WEBHOOK_URL:-$(existing WEBHOOK_URL)}"
  # Without a URL the bot would long-poll while nginx waits for a webhook that never comes.
  [ -n "$WEBHOOK_URL" ] || die "--webhook needs --webhook-url https://HOST/PATH (the public URL Telegram posts updates to); to stay with long polling leave out --webhook, to leave webhook mode use --no-webhook"
  # Bot API setWebhook: an https URL on port 443, 80, 88 or 8443; nginx listens on 443 only.
  # The path is what nginx serves and the bot listens on (bot/config.ts WEBHOOK_PATH form).
  if [[ ! "$WEBHOOK_URL" =~ ^https://[A-Za-z0-9.-]+(:443)?(/[A-Za-z0-9/_-]*)$ ]]; then
    die "--webhook-url '$WEBHOOK_URL' must look like https://bot.example.org/telegram/webhook: https, port 443 (nginx listens there), a path of A-Z a-z 0-9 / _ - and no query"
  fi
  WEBHOOK_PATH="${BASH_REMATCH[2]}"
  [ "$WEBHOOK_PATH" != / ] || die "--webhook-url needs a path (e.g. /telegram/webhook): nginx serves that path only"
  # TLS files nginx mounts: a missing bind source would become a directory and nginx would crash-loop.
  compose_env_file="$(rp "$ETC/compose.env")"
  TLS_CERT="${TLS_CERT:-$(env_get "$compose_env_file" DOCKET_TLS_CERT)}"
  TLS_CERT="${TLS_CERT:-$ETC/tls/fullchain.pem}"
  TLS_KEY="${TLS_KEY:-$(env_get "$compose_env_file" DOCKET_TLS_KEY)}"
  TLS_KEY="${TLS_KEY:-$ETC/tls/privkey.pem}"
  for f in "$TLS_CERT" "$TLS_KEY"; do
    case "$f" in /*) ;; *) die "TLS file '$f' must be an absolute path" ;; esac
    if [ ! -f "$(rp "$f")" ] || [ ! -s "$(rp "$f")" ]; then
      die "TLS file $f is missing or empty: nginx cannot start without it. Get a certificate for the webhook host (e.g. certbot certonly --standalone -d HOST) and pass --tls-cert /etc/letsencrypt/live/HOST/fullchain.pem --tls-key /etc/letsencrypt/live/HOST/privkey.pem"
    fi
  done
fi
log "  mode $MODE, data $DATA_DIR, health port $HTTP_PORT, budget $BUDGET, webhook $([ "$WEBHOOK" = 1 ] && echo on || echo off)"
if [ "$WEBHOOK" = 1 ] && [ "$MODE" = local ]; then
  warn "webhook with a local Bot API server: the server posts updates from inside its container, so the container must reach WEBHOOK_URL (the host's public name on :443, e.g. through hairpin NAT); this combination is not tested, long polling is the tested path in local mode (docs/local-mode.md)"
fi
if [ -n "$ROOT" ]; then log "  throwaway root: $ROOT (host accounts, packages, docker and systemctl are not touched)"; fi
check_memory
check_ports
check_release_space
if [ -z "$ROOT" ] && [ "$SKIP_PACKAGES" = 1 ] && { [ "$MODE" = local ] || [ "$WEBHOOK" = 1 ]; } && [ "${#COMPOSE_CMD[@]}" -eq 0 ]; then
  need_input "--skip-packages, but $([ "$MODE" = local ] && echo 'local mode' || echo 'webhook mode') runs containers and there is no compose client: install docker.io and docker-compose (Debian 12) or docker-compose-v2 (Ubuntu), or drop --skip-packages"
fi
# The free space on the file systems that will hold the data (DATA_DIR, and in local mode the
# server's --dir), checked before anything is written (disk-layout.sh does it again in step 5).
layout_args=(--env-file "$ETC/docket.env" --data-dir "$DATA_DIR" --bot-api-dir "$BOT_API_DIR"
  --bot-api-temp-dir "$BOT_API_TEMP_DIR" --mode "$MODE" --budget "$BUDGET")
if [ -n "$ROOT" ]; then layout_args+=(--root "$ROOT"); fi
if [ "$DRY_RUN" = 1 ]; then layout_args+=(--dry-run); fi
space_status=0
STEP_PARENT="$STEP_NO" bash "$HERE/disk-layout.sh" "${layout_args[@]}" --check-only || space_status=$?
if [ "$space_status" -ne 0 ]; then exit "$space_status"; fi

# ---------------------------------------------------------------------------------------------
step "system packages (sqlite3, curl, Tesseract OCR with rus+eng; Bun via npm; Docker for local mode and webhook mode)"
if [ "$SKIP_PACKAGES" = 1 ]; then
  skip "--skip-packages"
elif [ -z "$APT_CMD" ]; then
  skip "apt-get and npm (--root; set APT_GET/NPM to run them)"
else
  run env DEBIAN_FRONTEND=noninteractive "$APT_CMD" update -qq
  run env DEBIAN_FRONTEND=noninteractive "$APT_CMD" install -y -qq --no-install-recommends \
    ca-certificates curl sqlite3 openssl restic tesseract-ocr tesseract-ocr-rus tesseract-ocr-eng
  # The Bun this release was tested with (package.json packageManager), installed when absent or another.
  bun_wanted="$(bun_pin)"
  if command -v bun >/dev/null 2>&1 && [ "$(bun --version 2>/dev/null)" = "$bun_wanted" ]; then
    log "  = bun $bun_wanted present (the tested version)"
  else
    command -v npm >/dev/null 2>&1 ||
      run env DEBIAN_FRONTEND=noninteractive "$APT_CMD" install -y -qq --no-install-recommends nodejs npm
    run "$NPM_CMD" install -g "bun@${bun_wanted:-latest}"
  fi
  if [ "$MODE" = local ] || [ "$WEBHOOK" = 1 ]; then # the Bot API server and nginx run in Docker
    if command -v docker >/dev/null 2>&1; then
      log "  = docker present"
    else
      run env DEBIAN_FRONTEND=noninteractive "$APT_CMD" install -y -qq --no-install-recommends docker.io
    fi
    if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then
      # Ubuntu ships compose v2 as docker-compose-v2; Debian 12 only has the v1 docker-compose.
      run sh -c "DEBIAN_FRONTEND=noninteractive $APT_CMD install -y -qq --no-install-recommends docker-compose-v2 ||
        DEBIAN_FRONTEND=noninteractive $APT_CMD install -y -qq --no-install-recommends docker-compose"
      if docker compose version >/dev/null 2>&1; then COMPOSE_CMD=(docker compose); else COMPOSE_CMD=(docker-compose); fi
    fi
    if [ -n "$SYSTEMCTL_CMD" ]; then run "$SYSTEMCTL_CMD" enable --now docker.service; fi
  fi
fi
# The units run /usr/local/bin/bun; npm may have put it elsewhere (e.g. /usr/bin/bun).
bun_link="$(rp /usr/local/bin/bun)"
if [ -n "$ROOT" ]; then
  skip "link /usr/local/bin/bun (--root)"
elif [ -x "$bun_link" ]; then
  log "  = /usr/local/bin/bun present"
elif bun_path="$(command -v bun 2>/dev/null)"; then
  run ln -sfn "$(readlink -f "$bun_path")" "$bun_link"
elif [ "$DRY_RUN" = 1 ]; then
  show_cmd ln -sfn "<npm global bin>/bun" /usr/local/bin/bun
else
  die "bun not found after install; install Bun and re-run"
fi
if bun_bin="$(command -v bun 2>/dev/null)"; then
  check_bun "$bun_bin"
elif [ "$DRY_RUN" != 1 ]; then
  die "bun not found: install it (npm install -g bun@$(bun_pin)) or drop --skip-packages"
fi

# ---------------------------------------------------------------------------------------------
step "accounts: users $DOCKET_USER and $BOT_API_USER, group $BOT_API_GROUP (the local Bot API server's files)"
setup_accounts

# ---------------------------------------------------------------------------------------------
step "configuration in $ETC (docket.env mode 0600)"
token=""
token_source=""
if [ -n "$TOKEN_FILE" ]; then
  if [ "$TOKEN_FILE" = - ]; then
    IFS= read -r token || true
  else
    [ -r "$TOKEN_FILE" ] || die "--token-file $TOKEN_FILE is missing or not readable"
    token="$(head -n1 "$TOKEN_FILE")"
  fi
  token_source="--token-file"
elif [ -n "${BOT_TOKEN:-}" ]; then
  token="$BOT_TOKEN"
  token_source="\$BOT_TOKEN"
elif [ -n "$(existing BOT_TOKEN)" ]; then
  token_source="existing docket.env"
elif [ "$INTERACTIVE" = 1 ] && [ "$DRY_RUN" = 1 ]; then
  token_source="prompt (skipped in dry-run)"
elif [ "$INTERACTIVE" = 1 ]; then
  printf 'Bot token from @BotFather (input hidden): ' >/dev/tty
  IFS= read -rs token </dev/tty || true
  printf '\n' >/dev/tty
  token_source="prompt"
else
  need_input "no bot token: pass --token-file FILE or BOT_TOKEN=… (or run interactively)"
  token_source="nowhere (see the error above)"
fi
token="${token//[[:space:]]/}"
if [ -n "$token" ] && [[ ! "$token" =~ ^[0-9]+:[A-Za-z0-9_-]{20,}$ ]]; then
  die "the bot token does not look like 123456789:AA… (digits, colon, 20+ letters); it is not shown here"
fi
log "  token: from $token_source (never printed)"
scaling_resolve

api_hash=""
if [ "$MODE" = local ]; then
  API_ID="${API_ID:-${TELEGRAM_API_ID:-$(env_get "$(rp "$ETC/bot-api.env")" TELEGRAM_API_ID)}}"
  if [ -n "$API_HASH_FILE" ]; then
    [ -r "$API_HASH_FILE" ] || die "--api-hash-file $API_HASH_FILE is missing or not readable"
    api_hash="$(head -n1 "$API_HASH_FILE")"
  elif [ -n "${TELEGRAM_API_HASH:-}" ]; then
    api_hash="$TELEGRAM_API_HASH"
  elif [ -n "$(env_get "$(rp "$ETC/bot-api.env")" TELEGRAM_API_HASH)" ]; then
    :
  elif [ "$INTERACTIVE" = 1 ] && [ "$DRY_RUN" = 1 ]; then
    log "  api_hash: prompt (skipped in dry-run)"
  elif [ "$INTERACTIVE" = 1 ]; then
    printf 'api_hash from my.telegram.org (input hidden): ' >/dev/tty
    IFS= read -rs api_hash </dev/tty || true
    printf '\n' >/dev/tty
  else
    need_input "local mode needs api_hash: --api-hash-file FILE or TELEGRAM_API_HASH=…"
  fi
  if [ -z "$API_ID" ]; then
    if [ "$INTERACTIVE" = 1 ] && [ "$DRY_RUN" = 1 ]; then
      log "  api_id: prompt (skipped in dry-run)"
    elif [ "$INTERACTIVE" = 1 ]; then
      printf 'api_id from my.telegram.org: ' >/dev/tty
      IFS= read -r API_ID </dev/tty || true
    else
      need_input "local mode needs --api-id"
    fi
  fi
  if [ -n "$API_ID" ] && [[ ! "$API_ID" =~ ^[0-9]+$ ]]; then die "--api-id '$API_ID' must be the number my.telegram.org shows as api_id (App configuration)"; fi
  api_hash="${api_hash//[[:space:]]/}"
  if [ -n "$api_hash" ] && [[ ! "$api_hash" =~ ^[0-9a-fA-F]{32}$ ]]; then die "api_hash must be 32 hex digits"; fi
fi

webhook_secret="$(existing WEBHOOK_SECRET)"
if [ "$WEBHOOK" = 1 ] && [ -z "$webhook_secret" ]; then
  # Bot API: secret_token is 1-256 of A-Za-z0-9_- ; 48 random alphanumerics.
  webhook_secret="$(LC_ALL=C tr -dc 'A-Za-z0-9' </dev/urandom | head -c 48 || true)"
fi

if [ "$MODE" = local ]; then api_root="http://127.0.0.1:$BOT_API_PORT"; else api_root="https://api.telegram.org"; fi

# render_env — docket.env with every managed key set; other keys of an existing file are kept.
# Rendered in memory (env_set_text): the token never lands in a temp file; write_file then puts
# it on disk through a 0600 file in a private directory under /etc/docket (issue 9 item 10).
render_env() {
  local text
  if [ -r "$ENV_FILE" ]; then
    text="$(cat "$ENV_FILE")"$'\n'
  else
    text='# docket configuration (EnvironmentFile of docket*.service). Mode 0600, owner root.
# Every key, its default and unit: /opt/docket/current/docs/configuration.md (all keys with
# their defaults: /opt/docket/current/.env.example). Sizes take units (20MB, 4GB). Quote a
# value with spaces (BACKUP_ARGS="--with-results --keep 14"): this file is also read by sh.
'
  fi
  set_key() { text="$(env_set_text "$text" "$1" "$2")"$'\n'; }
  if [ -n "$token" ]; then set_key BOT_TOKEN "$token"; fi
  if [ "$SWITCH" = 1 ]; then
    : # BOT_API_MODE/BOT_API_ROOT stay as they are: `docket mode` rewrites them once the new server answered
  else
    set_key BOT_API_MODE "$MODE"
    set_key BOT_API_ROOT "$api_root"
  fi
  set_key DATA_DIR "$DATA_DIR"
  set_key LOCAL_BOT_API_DIR "$BOT_API_DIR"
  set_key BOT_API_TEMP_DIR "$BOT_API_TEMP_DIR"
  set_key HTTP_PORT "$HTTP_PORT"
  set_key DOWNLOAD_BUDGET "$BUDGET"
  scaling_set_keys
  if [ -n "$ALLOWED_USERS" ]; then
    set_key ALLOWED_USER_IDS "$ALLOWED_USERS"
  elif [ ! -r "$ENV_FILE" ]; then
    # A new file only: in an existing one an empty key could override a drop-in's Environment=.
    set_key ALLOWED_USER_IDS ""
  fi
  [ -n "$(printf '%s' "$text" | sed -n 's/^BACKUP_KEEP=//p')" ] || set_key BACKUP_KEEP 7
  # Quoted: the value holds spaces once flags are added, and docket.env is also sourced by sh.
  case "$text" in BACKUP_ARGS=* | *$'\n'BACKUP_ARGS=*) ;; *) set_key BACKUP_ARGS '""' ;; esac
  if [ "$WEBHOOK" = 1 ]; then
    set_key WEBHOOK_URL "$WEBHOOK_URL"
    set_key WEBHOOK_SECRET "$webhook_secret"
    set_key WEBHOOK_PORT "$WEBHOOK_PORT"
    set_key WEBHOOK_PATH "$WEBHOOK_PATH"
  elif [ "$NO_WEBHOOK" = 1 ]; then
    text="$(env_del_text "$text" WEBHOOK_URL WEBHOOK_SECRET WEBHOOK_PORT WEBHOOK_PATH)"$'\n'
  fi
  printf '%s' "$text"
}

# The certificate pair is checked before any file here changes (openssl is there by now).
if [ "$WEBHOOK" = 1 ] && [ "$DRY_RUN" != 1 ]; then tls_check "$(rp "$TLS_CERT")" "$(rp "$TLS_KEY")"; fi
run mkdir -p "$(rp "$ETC")" "$(rp "$ETC/hooks")" "$(rp "$ETC/backup/pre.d")" "$(rp "$ETC/backup/post.d")"
run chmod 0755 "$(rp "$ETC")"
rendered="$(render_env)"
if [ -r "$ENV_FILE" ] && [ "$rendered" = "$(cat "$ENV_FILE")" ]; then
  log "  = $ETC/docket.env unchanged"
  run chmod 0600 "$ENV_FILE"
else
  printf '%s\n' "$rendered" | write_file 0600 "$ENV_FILE"
  log "    keys: $(printf '%s\n' "$rendered" | grep -o '^[A-Z_][A-Z0-9_]*=' | tr -d '=' | tr '\n' ' ')"
fi
unset rendered

# compose.env: non-secret variables of compose/docker-compose.yml.
{
  printf '# Variables for compose/docker-compose.yml (docker compose --env-file). Written by install.sh.\n'
  printf 'COMPOSE_PROJECT_NAME=docket\n'
  printf 'DOCKET_ETC_DIR=%s\n' "$ETC"
  printf 'DOCKET_BOT_API_DIR=%s\n' "$BOT_API_DIR"
  printf 'DOCKET_BOT_API_TEMP_DIR=%s\n' "$BOT_API_TEMP_DIR"
  printf 'DOCKET_BOT_API_PORT=%s\n' "$BOT_API_PORT"
  # The server runs as docket-botapi (uid) with group docket-botapi (gid), as on the host.
  printf 'DOCKET_BOT_API_UID=%s\n' "$BOT_API_UID"
  printf 'DOCKET_BOT_API_GID=%s\n' "$BOT_API_GID"
  printf 'DOCKET_TLS_CERT=%s\n' "${TLS_CERT:-$(env_get "$(rp "$ETC/compose.env")" DOCKET_TLS_CERT)}"
  printf 'DOCKET_TLS_KEY=%s\n' "${TLS_KEY:-$(env_get "$(rp "$ETC/compose.env")" DOCKET_TLS_KEY)}"
} | write_file 0644 "$(rp "$ETC/compose.env")"

if [ "$MODE" = local ]; then
  if [ -n "$api_hash" ] || [ -n "$API_ID" ]; then
    existing_hash="$(env_get "$(rp "$ETC/bot-api.env")" TELEGRAM_API_HASH)"
    {
      printf '# Credentials of the local Bot API server (my.telegram.org). Mode 0600.\n'
      printf 'TELEGRAM_API_ID=%s\n' "$API_ID"
      printf 'TELEGRAM_API_HASH=%s\n' "${api_hash:-$existing_hash}"
    } | write_file 0600 "$(rp "$ETC/bot-api.env")"
  else
    skip "bot-api.env (kept as it is)"
  fi
fi
if [ "$WEBHOOK" = 1 ]; then
  # Everything nginx reads, in the one directory it gets mounted (scripts/lib/webhook.sh).
  nginx_conf_install "$SRC/compose/nginx/docket.conf" "$webhook_secret" "$WEBHOOK_PATH" "$WEBHOOK_PORT"
  nginx_tls_install "$(rp "$TLS_CERT")" "$(rp "$TLS_KEY")"
elif [ "$NO_WEBHOOK" = 1 ]; then
  for f in docket.conf webhook.inc webhook.conf tls/fullchain.pem tls/privkey.pem; do
    if [ -e "$(rp "$NGINX_DIR_REL/$f")" ]; then run rm -f "$(rp "$NGINX_DIR_REL/$f")"; fi
  done
fi

# ---------------------------------------------------------------------------------------------
step "disk layout under $DATA_DIR"
show_cmd bash "$HERE/disk-layout.sh" "${layout_args[@]}"
layout_status=0
STEP_PARENT="$STEP_NO" bash "$HERE/disk-layout.sh" "${layout_args[@]}" || layout_status=$?
if [ "$layout_status" -ne 0 ]; then exit "$layout_status"; fi

# ---------------------------------------------------------------------------------------------
step "application into $APP_DIR (release directory + 'current' link)"
# Release id = version + hash of the shipped files: unchanged source → same directory. A
# release's own marker (.complete) is not shipped, so install.sh run from an installed release
# hashes to that same release and reuses it (the rollback in docs/upgrading.md).
# Never shipped: dependencies, history, data, tests, and .env files other than .env.example
# (Bun loads .env from the WorkingDirectory: a developer's .env would override docket.env).
ship_list() {
  (cd "$SRC" && find . \( -path ./node_modules -o -path ./.git -o -path ./var -o -path ./samples \
    -o -path ./bench -o -path ./test -o -path ./coverage -o -path ./.complete \) -prune -o \
    \( -name '.env*' ! -name .env.example \) -prune -o -type f -print | LC_ALL=C sort)
}
version="$(sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$SRC/package.json" | head -n1)"
content_hash="$(cd "$SRC" && ship_list | tr '\n' '\0' | xargs -0 sha256sum | sha256sum | cut -c1-12)"
release="${version:-0}-$content_hash"
release_dir="$(rp "$APP_DIR/releases/$release")"
if [ -d "$release_dir" ] && [ -f "$release_dir/.complete" ]; then
  log "  = release $release already installed (reused: no copy, no bun install)"
  # Newest by mtime again, so the rotation below ranks a rolled-back release as recent.
  run touch "$release_dir"
else
  run rm -rf "$release_dir.tmp" # leftovers of an interrupted run
  run mkdir -p "$release_dir.tmp"
  show_cmd tar -C "$SRC" -cf - "<files of ship_list>" "|" tar -C "$release_dir.tmp" -xf -
  if [ "$DRY_RUN" != 1 ]; then
    (cd "$SRC" && ship_list | tar -cf - --no-recursion -T -) | tar -C "$release_dir.tmp" -xf -
  fi
  if [ -n "$ROOT" ] && [ -z "${WITH_DEPS:-}" ]; then
    skip "bun install (--root; set WITH_DEPS=1 to run it)"
  else
    run sh -c "cd '$release_dir.tmp' && bun install --frozen-lockfile"
  fi
  run touch "$release_dir.tmp/.complete"
  run rm -rf "$release_dir"
  run mv "$release_dir.tmp" "$release_dir"
fi
run chmod -R go-w "$release_dir"
# An upgrade of a running install: timers paused and a pre-upgrade backup first (scripts/lib/upgrade.sh).
prev_release="$(current_release)"
if [ -n "$prev_release" ] && [ "$prev_release" != "$release" ]; then upgrade_prepare "$prev_release" "$release"; fi
run ln -sfn "releases/$release" "$(rp "$APP_DIR/current")"
# The operator command: `docket mode cloud|local` (docs/local-mode.md).
printf '#!/bin/sh\n# docket operator command, written by install.sh: docket mode cloud|local [--dry-run]\nexec env DOCKET_ENV_FILE=%s /usr/local/bin/bun %s/current/bot/cli/main.ts "$@"\n' "$ETC/docket.env" "$APP_DIR" |
  write_file 0755 "$(rp /usr/local/bin/docket)"
# Keep the three newest releases for rollback (docs/upgrading.md).
if [ -d "$(rp "$APP_DIR/releases")" ]; then
  kept=0
  while IFS= read -r old; do
    case "$old" in "" | *.tmp) continue ;; esac
    kept=$((kept + 1))
    if [ "$kept" -gt 3 ] && [ "$old" != "$release" ]; then run rm -rf "$(rp "$APP_DIR/releases/$old")"; fi
  done < <(cd "$(rp "$APP_DIR/releases")" && ls -1t)
fi

# ---------------------------------------------------------------------------------------------
step "systemd units into $UNIT_DIR"
install_units

if [ "$NO_START" = 1 ]; then skip "systemctl daemon-reload (--no-start)"; else sysctl daemon-reload; fi

# ---------------------------------------------------------------------------------------------
step "local Bot API server (docket-bot-api.service, 127.0.0.1:$BOT_API_PORT)"
start_local_server

step "webhook nginx (docket-nginx.service, compose/webhook.yml)"
start_nginx

# ---------------------------------------------------------------------------------------------
step "start units"
start_bot

# ---------------------------------------------------------------------------------------------
step "health check http://127.0.0.1:$HTTP_PORT/healthz"
health_checks

# ---------------------------------------------------------------------------------------------
step "next steps"
if [ "$DRY_RUN" = 1 ]; then installed="would be installed"; else installed="is installed"; fi
cat >&2 <<EOF
  docket $release $installed ($MODE mode).
  - Logs:            journalctl -u docket.service -f
  - Health/metrics:  curl http://127.0.0.1:$HTTP_PORT/healthz ; curl http://127.0.0.1:$HTTP_PORT/metrics
  - Configuration:   $ETC/docket.env (then: systemctl restart docket.service)
  - Backups:         nightly to $DATA_DIR/backups (docs/backup.md); hooks in $ETC/backup/{pre.d,post.d}
  - Failure hook:    put an executable at $ETC/hooks/on-failure (gets the failed unit's name)
EOF
if [ -z "$ACCESS_IDS" ]; then
  cat >&2 <<EOF
  - Access:          ALLOWED_USER_IDS is empty, so EVERY Telegram user can use this bot. Limit it:
                     scripts/install.sh --allowed-users ID[,ID…] (or edit $ETC/docket.env and restart)
EOF
else
  log "  - Access:          only ALLOWED_USER_IDS=$ACCESS_IDS (and ADMIN_USER_IDS) may use the bot"
fi
if [ "$MODE" = local ]; then
  cat >&2 <<EOF
  - Local server:    docket-bot-api.service (systemctl status docket-bot-api.service);
                     server logs: journalctl CONTAINER_TAG=docket-bot-api
EOF
fi
if [ "$SWITCH" = 1 ] && [ "$MODE" = cloud ]; then
  cat >&2 <<EOF
  - The local Bot API server still runs (the bot is closed on it). Stop it when you no longer
    need it: systemctl disable --now docket-bot-api.service
EOF
fi
if [ "$WEBHOOK" = 1 ]; then
  cat >&2 <<EOF
  - Webhook:         nginx (docket-nginx.service) serves POST $WEBHOOK_PATH on :443 with the secret
                     from docket.env and a copy of $TLS_CERT in $NGINX_DIR_REL/tls.
                     After renewing the certificate: $APP_DIR/current/scripts/certbot-deploy-hook.sh
                     (certbot runs it itself: $CERTBOT_HOOK). Back to long polling: scripts/install.sh --no-webhook
EOF
fi
if first_local_install && [ "$BOT_STARTED" = 0 ]; then
  cat >&2 <<EOF

  ACTION NEEDED: the bot is NOT started yet. Before its first start on the local Bot API server it
  must be logged out of api.telegram.org, once (Telegram: logOut; the cloud then refuses it for
  10 minutes). The local server is $([ "$NO_START" = 1 ] && echo "installed" || echo "running and healthy"). Run:
      sudo $SRC/scripts/install.sh --logout-cloud$([ "$NO_START" = 1 ] && echo "   (without --no-start)")
  It logs out, starts the bot and checks it (your other settings are kept). By hand instead:
  docs/local-mode.md#switching-to-local-mode-by-hand, then: rm $LOGOUT_PENDING_REL && systemctl start docket.service
EOF
fi
if [ "$DRY_RUN" = 1 ]; then
  log "dry run: nothing was changed"
  if [ "${#DRY_PROBLEMS[@]}" -gt 0 ]; then
    log "dry run: the real run would stop with:"
    for p in "${DRY_PROBLEMS[@]}"; do log "  - $p"; done
    exit 1
  fi
fi
log "done"
