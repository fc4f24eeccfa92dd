# shellcheck shell=bash
# shellcheck disable=SC2154 # install.sh's settings (api_root, webhook_secret, …)
# scripts/lib/services.sh — install.sh's start of the containers and the bot, in a safe order
# (sourced by install.sh only; it uses install.sh's settings and its `systemctl`/`compose`).
#
# First local-mode install (issue 9 item 4): pull the image, start the local server and wait
# until it is healthy, and only then log out of the cloud and start the bot. A failed pull or a
# server that never gets healthy stops the install before logOut, so the bot is never left on
# neither server. Without --logout-cloud the bot is not started and the install says what to run.

# LOGOUT_PENDING — the marker of a first local install whose logOut on the cloud is still to do.
LOGOUT_PENDING_REL=/etc/docket/logout-cloud.pending
BOT_STARTED=0 # set when the bot was (re)started by this run

# sysctl ARG… — systemctl, or a skip line when there is none (--root without SYSTEMCTL).
sysctl() {
  if [ -z "$SYSTEMCTL_CMD" ]; then skip "systemctl $* (--root; set SYSTEMCTL to run it)"; return 0; fi
  run "$SYSTEMCTL_CMD" "$@"
}

# compose_service SERVICE ARG… — the compose client on the one file that defines SERVICE.
compose_service() {
  local service="$1"
  shift
  if [ "${#COMPOSE_CMD[@]}" -eq 0 ]; then skip "docker compose $* $service (--root; set DOCKER_COMPOSE to run it)"; return 0; fi
  run env COMPOSE_IGNORE_ORPHANS=1 "${COMPOSE_CMD[@]}" -p docket -f "$(rp "$APP_DIR/current/compose/$(compose_file_of "$service")")" \
    --env-file "$(rp "$ETC/compose.env")" "$@" "$service"
}

# bot_api_probe — wait (HEALTH_TIMEOUT) until the local server answers on 127.0.0.1 as
# telegram-bot-api does without a token: 404 {"ok":false,"error_code":404,…}. No method is
# called, so the bot logs in nowhere.
bot_api_probe() {
  local url="http://127.0.0.1:$BOT_API_PORT/" deadline body=""
  if [ "$DRY_RUN" = 1 ]; then show_cmd "$CURL_CMD" -s "$url"; return 0; fi
  deadline=$((SECONDS + HEALTH_TIMEOUT))
  while :; do
    body="$("$CURL_CMD" -s --max-time 2 "$url" 2>/dev/null || true)"
    case "$body" in *'"error_code":404'*) log "  local Bot API server answers on $url"; return 0 ;; esac
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 1
  done
  printf 'error: the local Bot API server does not answer on %s within %ss%s.\n' "$url" "$HEALTH_TIMEOUT" "${body:+ (it answered: ${body:0:120})}" >&2
  printf '       The bot was not started and not logged out of the cloud. Look at: systemctl status docket-bot-api.service; journalctl CONTAINER_TAG=docket-bot-api -n 50\n' >&2
  printf '       (api_id/api_hash in %s/bot-api.env, port %s free), then run install.sh again.\n' "$ETC" "$BOT_API_PORT" >&2
  exit 4
}

# start_local_server — step 8: the image first, then the supervised container, then the probe.
start_local_server() {
  if [ "$MODE" != local ]; then
    skip "cloud mode uses api.telegram.org"
    return 0
  fi
  if ! compose_service bot-api pull; then
    die "pulling the local Bot API server image failed (see above): nothing was started and the bot was not logged out of the cloud; check the network and DOCKET_BOT_API_IMAGE in $ETC/compose.env (docs/local-mode.md), then run install.sh again"
  fi
  if [ "$NO_START" = 1 ]; then
    skip "enabling and starting docket-bot-api.service (--no-start)"
    return 0
  fi
  sysctl enable docket-bot-api.service
  # systemctl waits until the unit is active, that is until docker reports the container healthy.
  if ! sysctl restart docket-bot-api.service; then
    printf 'error: docket-bot-api.service did not start (the container did not become healthy): the bot was not started and not logged out of the cloud.\n' >&2
    printf '       Look at: systemctl status docket-bot-api.service; journalctl -u docket-bot-api.service -n 30; journalctl CONTAINER_TAG=docket-bot-api -n 50; then run install.sh again.\n' >&2
    exit 4
  fi
  if [ -n "$SYSTEMCTL_CMD" ]; then bot_api_probe; fi
}

# start_nginx — step 9: the supervised nginx, restarted so it reads the new files.
start_nginx() {
  if [ "$WEBHOOK" = 1 ]; then
    if ! compose_service nginx pull; then
      die "pulling the nginx image failed (see above): nginx and the bot were left as they were; check the network and DOCKET_NGINX_IMAGE in $ETC/compose.env, then run install.sh again"
    fi
    install_certbot_hook
    if [ "$NO_START" = 1 ]; then
      skip "enabling and starting docket-nginx.service (--no-start)"
      return 0
    fi
    sysctl enable docket-nginx.service
    if ! sysctl restart docket-nginx.service; then
      printf 'error: docket-nginx.service did not start: look at systemctl status docket-nginx.service and journalctl CONTAINER_TAG=docket-nginx -n 50 (a certificate nginx cannot load, port 443 taken…), then run install.sh again.\n' >&2
      exit 4
    fi
  elif [ "$NO_WEBHOOK" = 1 ] && [ "$HAD_WEBHOOK" = 1 ]; then
    sysctl disable --now docket-nginx.service
    compose_service nginx rm -s -f ||
      warn "could not remove the nginx container; remove it by hand: docker rm -f docket-nginx-1 (or docket_nginx_1)"
    if [ -e "$(rp "$CERTBOT_HOOK")" ]; then run rm -f "$(rp "$CERTBOT_HOOK")"; fi
  elif [ "$NO_WEBHOOK" = 1 ]; then
    skip "no webhook was configured"
  else
    skip "long polling (no --webhook-url)"
  fi
}

# CERTBOT_HOOK — where certbot runs deploy hooks after every renewal (certbot(1), --deploy-hook).
CERTBOT_HOOK=/etc/letsencrypt/renewal-hooks/deploy/docket-nginx

# install_certbot_hook — when the certificate comes from certbot (/etc/letsencrypt/live/…),
# a deploy hook that copies the renewed pair into /etc/docket/nginx and reloads nginx.
install_certbot_hook() {
  case "$TLS_CERT" in
    /etc/letsencrypt/live/*)
      printf '#!/bin/sh\n# Written by docket install.sh: after certbot renews, refresh nginx'"'"'s copy and reload it.\nexec %s/current/scripts/certbot-deploy-hook.sh "$@"\n' "$APP_DIR" |
        write_file 0755 "$(rp "$CERTBOT_HOOK")"
      ;;
    *) log "  = the certificate is not from certbot (/etc/letsencrypt/live/…): after renewing it, run $APP_DIR/current/scripts/certbot-deploy-hook.sh" ;;
  esac
}

# first_local_install — true on a first install in local mode: no bot was running on the local
# server yet (no token in docket.env before, or the logOut marker is still there).
first_local_install() {
  [ "$MODE" = local ] && [ "$SWITCH" = 0 ] && { [ -z "$FROM_MODE" ] || [ -e "$(rp "$LOGOUT_PENDING_REL")" ]; }
}

# logout_cloud — Bot API logOut on api.telegram.org (once, before the first local start). The
# token goes to curl through its stdin config, never argv; curl's messages are shown redacted.
# Exit 5 when it fails: the bot is then not started (it is on no server yet; say what to run).
logout_cloud() {
  local t out
  # A throwaway root never reaches the real Telegram: only a TELEGRAM_CLOUD_ROOT given for it.
  if [ "$DRY_RUN" = 1 ] || { [ -n "$ROOT" ] && [ -z "${TELEGRAM_CLOUD_ROOT:-}" ]; }; then
    show_cmd "$CURL_CMD" -sS --max-time 20 --config - "(url = https://api.telegram.org/bot<token>/logOut)"
    return 0
  fi
  t="${token:-$(existing BOT_TOKEN)}"
  log "  + curl logOut on api.telegram.org (token hidden)"
  out="$(printf 'url = "%s/bot%s/logOut"\n' "${TELEGRAM_CLOUD_ROOT:-https://api.telegram.org}" "$t" |
    "$CURL_CMD" -sS --max-time 20 -X POST --config - 2>&1 || true)"
  out="${out//$t/<token>}"
  unset t
  case "$out" in
    *'"ok":true'*) log "  logged out of api.telegram.org: the cloud refuses this bot for 10 minutes now, the local server takes it"; return 0 ;;
  esac
  printf 'error: logOut on api.telegram.org failed: %s\n' "${out:0:300}" >&2
  printf '       The bot was not started: it runs on no server yet. Fix the cause (network to api.telegram.org, the token) and run the same install.sh command again,\n' >&2
  printf '       or log out by hand (docs/local-mode.md#switching-to-local-mode-by-hand), then: rm %s && systemctl start docket.service\n' "$LOGOUT_PENDING_REL" >&2
  exit 5
}

# start_bot — step 10 (daemon-reload was step 7's): enable, then start the bot (or hand a mode
# change to `docket mode`), then the timers.
start_bot() {
  local pending
  pending="$(rp "$LOGOUT_PENDING_REL")"
  if [ "$NO_START" = 1 ]; then
    if first_local_install && [ ! -e "$pending" ]; then mark_logout_pending; fi
    skip "--no-start"
    return 0
  fi
  sysctl enable docket.service docket-janitor.timer docket-backup.timer docket-backup-verify.timer
  if [ "$SWITCH" = 1 ]; then
    # The Bot API steps in their order (bot/cli/mode.ts); it stops and starts docket.service.
    if [ "$LOGOUT_CLOUD" = 1 ] && [ "$MODE" = local ]; then
      log "  = logOut on api.telegram.org is done by \`docket mode local\`, after the service stopped"
    fi
    if [ -z "$DOCKET_CLI_CMD" ]; then
      skip "docket mode $MODE (--root; set DOCKET_CLI to run it)"
    else
      run "$DOCKET_CLI_CMD" mode "$MODE" --env "$ENV_FILE" --api-root "$api_root"
    fi
    BOT_STARTED=1
  elif first_local_install && [ "$LOGOUT_CLOUD" = 0 ]; then
    [ -e "$pending" ] || mark_logout_pending
    skip "starting docket.service: the bot must be logged out of api.telegram.org first (--logout-cloud)"
  else
    if first_local_install; then
      # Marked first: a logOut that fails leaves the marker, so the next run still knows.
      [ -e "$pending" ] || mark_logout_pending
      logout_cloud
      run rm -f "$pending"
    fi
    sysctl restart docket.service
    BOT_STARTED=1
  fi
  sysctl start docket-janitor.timer docket-backup.timer docket-backup-verify.timer
}

# mark_logout_pending — remember that this local-mode bot still needs its one logOut.
mark_logout_pending() {
  printf '# Written by install.sh: this bot has not yet been logged out of api.telegram.org, so it\n# is not started on the local server. Run: scripts/install.sh --logout-cloud\n' |
    write_file 0644 "$(rp "$LOGOUT_PENDING_REL")"
}

# health_checks — step 11: /healthz of the bot, then (webhook mode) the webhook through nginx.
health_checks() {
  local deadline healthy=0 body="" host
  if [ "$NO_START" = 1 ] || [ -z "$SYSTEMCTL_CMD" ]; then
    skip "service not started"
    return 0
  fi
  if [ "$BOT_STARTED" = 0 ]; then
    skip "the bot was not started (logOut on api.telegram.org pending, see below)"
  elif [ "$DRY_RUN" = 1 ]; then
    show_cmd "$CURL_CMD" -fsS --max-time 2 "http://127.0.0.1:$HTTP_PORT/healthz"
  else
    deadline=$((SECONDS + HEALTH_TIMEOUT))
    while :; do
      if body="$("$CURL_CMD" -fsS --max-time 2 "http://127.0.0.1:$HTTP_PORT/healthz" 2>/dev/null)"; then
        healthy=1
        break
      fi
      [ "$SECONDS" -ge "$deadline" ] && break
      sleep 1
    done
    if [ "$healthy" != 1 ]; then
      printf 'error: no healthy answer from http://127.0.0.1:%s/healthz within %ss\n' "$HTTP_PORT" "$HEALTH_TIMEOUT" >&2
      printf '       look at: journalctl -u docket.service -n 100 --no-pager\n' >&2
      exit 4
    fi
    log "  healthy: ${body:0:200}"
  fi
  if [ "$WEBHOOK" = 1 ]; then
    host="${WEBHOOK_URL#https://}"
    host="${host%%/*}"
    host="${host%:443}"
    if [ "$DRY_RUN" = 1 ]; then
      show_cmd openssl s_client -connect 127.0.0.1:443 -servername "$host"
      show_cmd curl -sk --resolve "$host:443:127.0.0.1" -X POST "https://$host$WEBHOOK_PATH"
      return 0
    fi
    # nginx may still be loading after its restart: the same bound as the health check.
    deadline=$((SECONDS + HEALTH_TIMEOUT))
    until PROBE_BOT="$BOT_STARTED" webhook_probe "$host" "$WEBHOOK_PATH" "$webhook_secret" "$(rp "$NGINX_DIR_REL/tls/fullchain.pem")" 127.0.0.1:443; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        printf 'error: the webhook does not answer through nginx: %s\n' "$PROBE_ERROR" >&2
        exit 4
      fi
      sleep 1
    done
    log "  webhook: nginx serves $WEBHOOK_PATH for $host with the installed certificate$([ "$BOT_STARTED" = 1 ] && echo ', and the bot answers through it')"
  fi
}
