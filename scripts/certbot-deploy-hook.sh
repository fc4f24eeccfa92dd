#!/usr/bin/env bash
# certbot-deploy-hook.sh — after a certificate renewal: put the new certificate and key into
# nginx's directory (/etc/docket/nginx/tls), reload nginx, and check that it serves the new one
# (issue 9 item 3).
#
# certbot runs it after every successful renewal as /etc/letsencrypt/renewal-hooks/deploy/docket-nginx
# (install.sh writes that when --tls-cert is under /etc/letsencrypt/live/), with
# RENEWED_LINEAGE=/etc/letsencrypt/live/HOST: the renewal of another certificate is ignored.
# After renewing any other way, run it by hand (as root); it reads the certificate from the
# paths install.sh recorded (DOCKET_TLS_CERT, DOCKET_TLS_KEY in /etc/docket/compose.env).
#
# Usage: certbot-deploy-hook.sh [--root DIR]
# Nothing half-applied: a pair that is not a valid certificate with its key is refused and
# nginx keeps the old one; if nginx does not take the new pair, the old one is put back.
# Replaceable commands: SYSTEMCTL, DOCKET_CLI (the `docket` command, for `docket notify`).
# Exit codes: 0 done (or not docket's certificate), 1 refused or nginx did not take it.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=scripts/lib/webhook.sh
. "$HERE/lib/webhook.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT="${2:?--root needs a directory}"; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
normalize_root
SYSTEMCTL_CMD="${SYSTEMCTL:-systemctl}"
DOCKET_CLI_CMD="${DOCKET_CLI:-/usr/local/bin/docket}"
TAG="docket certificate"

compose_env="$(rp /etc/docket/compose.env)"
cert="$(env_get "$compose_env" DOCKET_TLS_CERT)"
key="$(env_get "$compose_env" DOCKET_TLS_KEY)"
if [ -z "$cert" ] || [ -z "$key" ] || [ ! -e "$(rp "$NGINX_DIR_REL/docket.conf")" ]; then
  log "$TAG: no webhook nginx is configured here (DOCKET_TLS_CERT in /etc/docket/compose.env); nothing to do"
  exit 0
fi
if [ -n "${RENEWED_LINEAGE:-}" ]; then
  case "$cert" in
    "${RENEWED_LINEAGE%/}"/*) ;;
    *) log "$TAG: $RENEWED_LINEAGE was renewed, nginx uses $cert: not ours, nothing to do"; exit 0 ;;
  esac
fi

# notify TEXT — the operator alert (CONTRACTS §2, cause webhook_error), best-effort.
notify() { if [ -x "$DOCKET_CLI_CMD" ]; then "$DOCKET_CLI_CMD" notify webhook_error "$1" >/dev/null 2>&1 || true; fi; }

# A bad pair stops here (tls_check names the file); nginx's copies are untouched.
tls_check "$(rp "$cert")" "$(rp "$key")"
tls_dir="$(rp "$NGINX_DIR_REL/tls")"
if [ "$(cert_fingerprint "$(rp "$cert")")" = "$(cert_fingerprint "$tls_dir/fullchain.pem" 2>/dev/null || true)" ]; then
  log "$TAG: nginx already has this certificate; reloading anyway"
fi
prev="$(umask 077 && mktemp -d "$tls_dir/.prev.XXXXXX")"
cp -p "$tls_dir/fullchain.pem" "$tls_dir/privkey.pem" "$prev/"
nginx_tls_install "$(rp "$cert")" "$(rp "$key")"

# put_back WHY — restore the previous pair, reload nginx on it, report, exit 1.
put_back() {
  mv -f "$prev/fullchain.pem" "$tls_dir/fullchain.pem"
  mv -f "$prev/privkey.pem" "$tls_dir/privkey.pem"
  rmdir "$prev"
  "$SYSTEMCTL_CMD" reload docket-nginx.service || true
  printf 'error: %s: %s; the previous certificate was put back and nginx serves it. Look at: journalctl -u docket-nginx.service -n 20\n' "$TAG" "$1" >&2
  notify "renewed TLS certificate not taken by nginx: $1"
  exit 1
}

if ! "$SYSTEMCTL_CMD" reload docket-nginx.service; then
  put_back "nginx refused to reload with the renewed certificate ($cert)"
fi
env_file="$(rp /etc/docket/docket.env)"
url="$(env_get "$env_file" WEBHOOK_URL)"
host="${url#https://}"
host="${host%%/*}"
host="${host%:443}"
deadline=$((SECONDS + 15))
until webhook_probe "$host" "$(env_get "$env_file" WEBHOOK_PATH)" "" "$tls_dir/fullchain.pem"; do
  if [ "$SECONDS" -ge "$deadline" ]; then put_back "$PROBE_ERROR"; fi
  sleep 1
done
rm -rf "$prev"
log "$TAG: nginx serves the renewed certificate for $host (SHA-256 $(cert_fingerprint "$tls_dir/fullchain.pem"), expires $(openssl x509 -noout -enddate -in "$tls_dir/fullchain.pem" | sed 's/^notAfter=//'))"
