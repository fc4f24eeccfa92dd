#!/usr/bin/env bash
# ci-tools.sh — install the Debian packages that the bundle checks and the tests need.
#
# Called by .ci/run before the tests (and safe to run by hand). Idempotent: when every
# package is already installed it only checks and returns in well under a second.
# apt is given bounded time and a retry; a slow or failing apt does not fail this script
# by itself, but a package still missing at the end does (exit 1), so CI never runs the
# bundle tests against a half-installed machine.
#
#   - shellcheck:     lint of scripts/, compose/ and .ci/run (test/bundle)
#   - nginx:          `nginx -t` on compose/nginx/docket.conf (test/bundle)
#   - systemd:        `systemd-analyze verify` on systemd/ units (test/bundle)
#   - sqlite3:        backup.sh / restore.sh (.backup, PRAGMA integrity_check)
#   - openssl:        dummy TLS certificates for `nginx -t`
#   - curl:           requests to the live nginx and the install health check
#   - docker-compose: `docker-compose config` on compose/docker-compose.yml and compose/webhook.yml (no engine needed)
#   - poppler-utils:  pdftoppm / pdfinfo (processor tests, bench)
#   - imagemagick:    convert (bench fixtures)
set -euo pipefail

PACKAGES=(shellcheck nginx systemd sqlite3 openssl curl docker-compose poppler-utils imagemagick)
APT_UPDATE_TIMEOUT="${APT_UPDATE_TIMEOUT:-300}"
APT_INSTALL_TIMEOUT="${APT_INSTALL_TIMEOUT:-900}"

log() { printf 'ci-tools: %s\n' "$*" >&2; }

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
