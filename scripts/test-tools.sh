#!/usr/bin/env bash
# test-tools.sh — install the Debian packages the test suites need (the table is scripts/test-tools.ts).
#
# Called by `bun run test` (scripts/test.ts) with the missing packages as arguments, when it runs as
# root on a machine with apt-get; safe to run by hand. Without arguments it installs every package of
# the table. Idempotent: when every package is already installed it only checks and returns in well
# under a second. apt is given bounded time and a retry; a package still missing at the end makes it
# exit 1 (the test command then skips the suites that need it, naming the package).
set -euo pipefail

if [ "$#" -gt 0 ]; then
  PACKAGES=("$@")
else
  read -r -a PACKAGES <<<"$(bun "$(dirname "$0")/test-tools.ts")"
fi
APT_UPDATE_TIMEOUT="${APT_UPDATE_TIMEOUT:-300}"
APT_INSTALL_TIMEOUT="${APT_INSTALL_TIMEOUT:-900}"

log() { printf 'test-tools: %s\n' "$*" >&2; }

is_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = "installed" ]
}

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    is_installed "$p" || printf '%s\n' "$p"
  done
}

mapfile -t missing < <(missing_packages)
if [ "${#missing[@]}" -eq 0 ]; then
  log "all packages present: ${PACKAGES[*]}"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  log "missing packages (${missing[*]}) and not root; install them with apt-get"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Keep package maintainer scripts from starting daemons (nginx would bind :80 on the CI box).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 0755 "$policy"
  created_policy=1
fi
cleanup() { if [ "$created_policy" -eq 1 ]; then rm -f "$policy"; fi; }
trap cleanup EXIT

log "installing: ${missing[*]}"
for attempt in 1 2; do
  if ! timeout "$APT_UPDATE_TIMEOUT" apt-get update -qq; then
    log "apt-get update failed or timed out (attempt $attempt); trying the cached lists"
  fi
  if timeout "$APT_INSTALL_TIMEOUT" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    break
  fi
  log "apt-get install failed or timed out (attempt $attempt)"
done

mapfile -t still < <(missing_packages)
if [ "${#still[@]}" -ne 0 ]; then
  log "still missing after install: ${still[*]}"
  exit 1
fi
log "installed: ${missing[*]}"
