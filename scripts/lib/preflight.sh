# shellcheck shell=bash
# shellcheck disable=SC2154 # install.sh's settings (MODE, WEBHOOK, the ports, …)
# scripts/lib/preflight.sh — install.sh's checks of the host before anything is changed (issue 9
# item 12): OS, architecture, memory, disk for the release, the ports docket needs, and the Bun
# version the release was tested with. Sourced by install.sh only.
#
# In a throwaway root (--root) the host files read are ROOT's when it has them (/etc/os-release,
# /proc/meminfo), and the port check runs only with SS given (the `ss` to use).

MIN_MEMORY_MB=1024      # below: refused (one processing child alone may take PROCESS_MEMORY_MB)
LOW_MEMORY_MB=2000      # below: a warning (docs/sizing.md: 2 GB is the smallest VPS it sizes)
RELEASE_SPACE_MB=1024   # one release with its node_modules is ≈ 300 MB; three are kept

# host_file PATH — ROOT's copy of a host file when it has one, else the host's.
host_file() { if [ -n "$ROOT" ] && [ -e "$ROOT$1" ]; then printf '%s' "$ROOT$1"; else printf '%s' "$1"; fi; }

# check_os — Debian or Ubuntu (apt is how packages come); anything else only with --skip-packages.
check_os() {
  local rel id like version
  rel="$(host_file /etc/os-release)"
  if [ ! -r "$rel" ]; then
    warn "no /etc/os-release: cannot tell the OS; docket is tested on Debian 12"
    return 0
  fi
  id="$(env_get "$rel" ID)"
  like="$(env_get "$rel" ID_LIKE)"
  version="$(env_get "$rel" VERSION_ID)"
  case "$id $like" in
    *debian* | *ubuntu*) log "  os: $id $version${like:+ (like $like)}" ;;
    *)
      if [ "$SKIP_PACKAGES" = 1 ]; then
        warn "os $id $version is not Debian or Ubuntu; --skip-packages: Bun, sqlite3, curl, openssl (and Docker for local or webhook mode) must be there already"
      else
        die "os $id $version is not Debian or Ubuntu, and install.sh installs packages with apt-get: install Bun, sqlite3, curl and openssl (Docker and Compose for local or webhook mode) yourself and run install.sh --skip-packages"
      fi
      ;;
  esac
  case "$id:$version" in
    debian:1[2-9]* | ubuntu:2[2-9].* | ubuntu:[3-9]*) ;;
    debian:* | ubuntu:*) warn "$id $version is older than docket is tested on (Debian 12, Ubuntu 22.04/24.04); packages may be missing" ;;
  esac
}

# check_arch — amd64 or arm64: the only ones both Bun and the Bot API server image exist for.
check_arch() {
  local m
  m="$(uname -m)"
  case "$m" in
    x86_64 | amd64 | aarch64 | arm64) log "  architecture: $m" ;;
    *) die "architecture $m is not supported: docket runs on amd64 (x86_64) and arm64 (aarch64), the ones Bun and the local Bot API server image are built for" ;;
  esac
}

# check_memory — MemTotal against the minimum, and the worst case of the configured pool.
check_memory() {
  local total_kb total_mb conc mem ocr worst
  total_kb="$(awk '/^MemTotal:/ { print $2 }' "$(host_file /proc/meminfo)" 2>/dev/null || true)"
  [ -n "$total_kb" ] || { warn "cannot read MemTotal from /proc/meminfo; memory not checked"; return 0; }
  total_mb=$((total_kb / 1024))
  if [ "$total_mb" -lt "$MIN_MEMORY_MB" ]; then
    die "this host has $total_mb MB of memory; docket needs at least $MIN_MEMORY_MB MB (the bot ≈ 75 MB plus one processing child of up to PROCESS_MEMORY_MB, docs/sizing.md): use a larger VPS"
  fi
  conc="$(existing PROCESS_CONCURRENCY)"
  conc="${conc:-$(nproc 2>/dev/null || echo 1)}"
  mem="$(existing PROCESS_MEMORY_MB)"
  mem="${mem:-1024}"
  ocr="$(existing OCR_CONCURRENCY)"
  ocr="${ocr:-$(nproc 2>/dev/null || echo 1)}"
  worst="$(pool_worst_mb "$conc" "$mem" "$ocr")"
  log "  memory: $total_mb MB; worst case of the bot with PROCESS_CONCURRENCY=$conc × (PROCESS_MEMORY_MB=$mem + OCR_CONCURRENCY=$ocr × ${TESSERACT_MEMORY_MB} MB): $worst MB"
  if [ "$total_mb" -lt "$LOW_MEMORY_MB" ]; then
    warn "only $total_mb MB of memory: docs/sizing.md sizes 2 GB as the smallest VPS (PROCESS_CONCURRENCY=1, PROCESS_MEMORY_MB=768)"
  fi
  if [ "$worst" -gt "$total_mb" ]; then
    warn "PROCESS_CONCURRENCY × (PROCESS_MEMORY_MB + OCR_CONCURRENCY × ${TESSERACT_MEMORY_MB} MB) ($conc × ($mem + $ocr × ${TESSERACT_MEMORY_MB}) MB) plus the bot exceeds this host's $total_mb MB: lower them in $ETC/docket.env (docs/sizing.md); the unit's MemoryMax stops the bot before the host runs out"
  fi
}

# check_release_space — room for a new release under /opt/docket (skipped when it is reused).
check_release_space() {
  local have
  have="$(free_bytes "$(rp "$APP_DIR")")"
  if [ "$have" -lt $((RELEASE_SPACE_MB * 1024 * 1024)) ]; then
    die "not enough free space for a release under $APP_DIR: $(human_bytes "$have") available, $RELEASE_SPACE_MB MB needed (one release with its dependencies is ≈ 300 MB, three are kept); free space there, or remove old releases in $APP_DIR/releases"
  fi
}

# check_port_value FLAG VALUE DEFAULT — die unless VALUE is a TCP port 1–65535 (it may come from
# the flag or from docket.env/compose.env; the message names the flag and the default).
check_port_value() {
  if [[ ! "$2" =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ] || [ "$2" -gt 65535 ]; then
    die "$1 '$2' is not a TCP port: give a number from 1 to 65535 (default $3), or fix the value in $ETC/docket.env or compose.env"
  fi
}

# port_owner PORT — "pid comm" of the process listening on TCP PORT, "" when none.
port_owner() {
  local line pid comm
  line="$("$SS_CMD" -Hltnp "sport = :$1" 2>/dev/null | head -n1)" || true
  [ -n "$line" ] || return 0
  pid="$(printf '%s' "$line" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')"
  comm="$(printf '%s' "$line" | sed -n 's/.*(("\([^"]*\)".*/\1/p')"
  printf '%s %s' "${pid:-?}" "${comm:-?}"
}

# port_is_docket PID PORT — true when the listener is docket's own: a process of one of its units,
# one of its containers, or docker-proxy publishing a port of one of its containers.
port_is_docket() {
  local pid="$1" port="$2" cg id
  [ -r "/proc/$pid/cgroup" ] || return 1
  cg="$(cat "/proc/$pid/cgroup")"
  case "$cg" in */docket.service* | */docket-*.service*) return 0 ;; esac
  command -v docker >/dev/null 2>&1 || return 1
  for id in $(docker ps -q --no-trunc --filter label=com.docker.compose.project=docket 2>/dev/null); do
    case "$cg" in *"$id"*) return 0 ;; esac
  done
  if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = docker-proxy ]; then
    [ -n "$(docker ps -q --filter label=com.docker.compose.project=docket --filter "publish=$port" 2>/dev/null)" ] && return 0
  fi
  return 1
}

# check_ports — every port this install needs is free, or already docket's. FLAG names the
# option that moves it ("" = it cannot move).
check_ports() {
  local spec port flag what owner
  if [ -z "$SS_CMD" ]; then
    skip "port check (--root; set SS=ss to run it)"
    return 0
  fi
  local specs=("$HTTP_PORT|--http-port|the bot's /healthz and /metrics")
  if [ "$WEBHOOK" = 1 ]; then specs+=("$WEBHOOK_PORT|--webhook-port|the bot's webhook listener" "443||nginx for the webhook (Telegram posts to :443)"); fi
  if [ "$MODE" = local ]; then specs+=("$BOT_API_PORT|--bot-api-port|the local Bot API server"); fi
  for spec in "${specs[@]}"; do
    IFS='|' read -r port flag what <<<"$spec"
    owner="$(port_owner "$port")"
    if [ -z "$owner" ]; then
      continue
    elif port_is_docket "${owner%% *}" "$port"; then
      log "  = port $port ($what) is docket's own (${owner#* })"
    elif [ -n "$flag" ]; then
      need_input "port $port ($what) is in use by ${owner#* } (pid ${owner%% *}): choose another with $flag PORT, or stop that program"
    else
      need_input "port $port ($what) is in use by ${owner#* } (pid ${owner%% *}): stop that program (or its :443 server) first, or install without a webhook (long polling needs no port)"
    fi
  done
  log "  ports: $(for spec in "${specs[@]}"; do printf '%s ' "${spec%%|*}"; done)free or docket's"
}

# bun_pin — the Bun version the release was tested with: package.json "packageManager": "bun@X".
bun_pin() { sed -n 's/^[[:space:]]*"packageManager":[[:space:]]*"bun@\([^"]*\)".*/\1/p' "$SRC/package.json" | head -n1; }

# bun_engines — the range package.json "engines.bun" declares.
bun_engines() { awk '/"engines"/ { e = 1 } e && /"bun"/ { sub(/.*"bun"[[:space:]]*:[[:space:]]*"/, ""); sub(/".*/, ""); print; exit }' "$SRC/package.json"; }

# check_bun BUN — the Bun at BUN satisfies engines.bun (asked of Bun itself: Bun.semver); a
# version other than the pinned one is named.
check_bun() {
  local bun="$1" have pin range
  have="$("$bun" --version 2>/dev/null || true)"
  pin="$(bun_pin)"
  range="$(bun_engines)"
  [ -n "$have" ] || die "$bun does not run (bun --version failed): reinstall Bun: npm install -g bun@${pin:-latest}"
  if [ -n "$range" ] && ! "$bun" -e "process.exit(Bun.semver.satisfies(Bun.version, process.argv[1]) ? 0 : 1)" "$range" >/dev/null 2>&1; then
    die "Bun $have does not satisfy engines.bun \"$range\" of package.json: install the tested version: npm install -g bun@$pin (or drop --skip-packages and install.sh does it)"
  fi
  if [ -n "$pin" ] && [ "$have" != "$pin" ]; then
    warn "Bun $have is not the version this release was tested with ($pin, package.json packageManager); it satisfies engines.bun \"$range\". To pin it: npm install -g bun@$pin"
  else
    log "  = bun $have (the tested version)"
  fi
}
