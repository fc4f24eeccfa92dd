#!/usr/bin/env bash
# container.sh — how systemd runs one of docket's containers (docket-bot-api.service,
# docket-nginx.service). systemd supervises the container: the unit is active only once the
# container is healthy, and it fails (Restart=, then OnFailure= → docket-failure@) when the
# container stops, is restarted behind its back or turns unhealthy (issue 9 item 8).
#
# Usage: container.sh start|watch|stop|reload SERVICE [--root DIR]
#   start    `compose up -d SERVICE` (recreates the container when its compose settings changed),
#            then wait until docker reports it healthy: CONTAINER_START_TIMEOUT seconds
#            (default 150), else exit 1 with the container's last health output
#   watch    the unit's main process: check the container every CONTAINER_POLL seconds
#            (default 5); exit 1 with one line naming what happened when it is not running, was
#            restarted by docker (a crash), was replaced, or is unhealthy
#   stop     `compose stop SERVICE`
#   reload   nginx only: `nginx -t`, then `nginx -s reload` inside the container (a changed
#            webhook.inc or a renewed certificate in /etc/docket/nginx takes effect)
#
# SERVICE is bot-api (compose/docker-compose.yml) or nginx (compose/webhook.yml); the compose
# files are the ones next to this script, the variables come from /etc/docket/compose.env.
# Replaceable commands: DOCKER_COMPOSE (else `docker compose` or `docker-compose`), DOCKER.
# Exit codes: 0 ok, 1 the container failed (the message says how), 2 usage.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=scripts/lib/containers.sh
. "$HERE/lib/containers.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

ACTION="${1:-}" SERVICE="${2:-}"
[ $# -ge 2 ] || { usage >&2; exit 2; }
shift 2
while [ $# -gt 0 ]; do
  case "$1" in
    --root) ROOT="${2:?--root needs a directory}"; shift ;;
    *) printf 'error: unknown argument: %s (see --help)\n' "$1" >&2; exit 2 ;;
  esac
  shift
done
normalize_root
case "$SERVICE" in bot-api | nginx) ;; *) printf 'error: unknown service %s: bot-api or nginx\n' "$SERVICE" >&2; exit 2 ;; esac
UNIT="docket-$SERVICE.service"
TAG="docket-$SERVICE"
POLL="${CONTAINER_POLL:-5}"
START_TIMEOUT="${CONTAINER_START_TIMEOUT:-150}"
DOCKER_CMD="${DOCKER:-docker}"
compose_client_detect
[ "${#COMPOSE_CMD[@]}" -gt 0 ] || { printf '%s: no compose client (docker compose or docker-compose): install docker-compose-v2 or docker-compose, or run scripts/install.sh\n' "$UNIT" >&2; exit 1; }
COMPOSE_FILES=(-f "$HERE/../compose/$(compose_file_of "$SERVICE")")

compose() { COMPOSE_IGNORE_ORPHANS=1 "${COMPOSE_CMD[@]}" -p docket "${COMPOSE_FILES[@]}" --env-file "$(rp /etc/docket/compose.env)" "$@"; }

# container_id — the id of the service's container ("" when there is none).
container_id() { compose ps -q "$SERVICE" 2>/dev/null | head -n1; }

# read_state ID — set status health started restarts code oom from docker inspect; false when
# the container is gone.
read_state() {
  local line
  line="$("$DOCKER_CMD" inspect -f '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.StartedAt}} {{.RestartCount}} {{.State.ExitCode}} {{.State.OOMKilled}}' "$1" 2>/dev/null)" || return 1
  read -r status health started restarts code oom <<<"$line"
}

# exit_note — ", killed for memory: …" when the last exit was the memory limit, else "".
exit_note() { if [ "${oom:-false}" = true ]; then printf ', killed for memory: raise its limit, docs/sizing.md'; fi; }

# last_health ID — the output of the container's last health probe, on one line.
last_health() {
  "$DOCKER_CMD" inspect -f '{{if .State.Health}}{{range .State.Health.Log}}{{.Output}}{{end}}{{end}}' "$1" 2>/dev/null | tr '\n' ' ' | tail -c 300
}

logs_hint="logs: journalctl CONTAINER_TAG=$TAG"

status="" health="" started="" restarts="" code="" oom=""
case "$ACTION" in
  start)
    compose up -d --no-build "$SERVICE"
    deadline=$((SECONDS + START_TIMEOUT))
    while :; do
      id="$(container_id)"
      if [ -n "$id" ] && read_state "$id"; then
        case "$status/$health" in
          running/healthy | running/none)
            log "$UNIT: container $SERVICE is $status ($health)"
            exit 0
            ;;
          exited/* | dead/*)
            printf '%s: container %s %s right after start (exit code %s%s); %s\n' "$UNIT" "$SERVICE" "$status" "$code" "$(exit_note)" "$logs_hint" >&2
            exit 1
            ;;
        esac
      fi
      if [ "$SECONDS" -ge "$deadline" ]; then
        printf '%s: container %s not healthy within %ss (state %s/%s; last health check: %s); %s\n' \
          "$UNIT" "$SERVICE" "$START_TIMEOUT" "${status:-none}" "${health:-none}" "$(last_health "${id:-none}")" "$logs_hint" >&2
        exit 1
      fi
      sleep "$POLL"
    done
    ;;
  watch)
    id0="$(container_id)"
    if [ -z "$id0" ] || ! read_state "$id0"; then
      printf '%s: no container for %s (was it removed?); systemd starts it again\n' "$UNIT" "$SERVICE" >&2
      exit 1
    fi
    started0="$started" restarts0="$restarts"
    while sleep "$POLL"; do
      id="$(container_id)"
      if [ "$id" != "$id0" ] || ! read_state "$id"; then
        printf '%s: the container of %s was %s outside this unit (by hand?); systemd restarts the unit to take it over again\n' \
          "$UNIT" "$SERVICE" "$([ -n "$id" ] && echo replaced || echo removed)" >&2
        exit 1
      fi
      if [ "$status" != running ]; then
        printf '%s: container %s is %s (exit code %s%s); systemd restarts it; %s\n' "$UNIT" "$SERVICE" "$status" "$code" "$(exit_note)" "$logs_hint" >&2
        exit 1
      fi
      if [ "$restarts" != "$restarts0" ] || [ "$started" != "$started0" ]; then
        printf '%s: container %s crashed and docker restarted it (restart count %s, last exit code %s%s); systemd restarts the unit; %s\n' \
          "$UNIT" "$SERVICE" "$restarts" "$code" "$(exit_note)" "$logs_hint" >&2
        exit 1
      fi
      if [ "$health" = unhealthy ]; then
        printf '%s: container %s is unhealthy (last health check: %s); systemd restarts it; %s\n' "$UNIT" "$SERVICE" "$(last_health "$id")" "$logs_hint" >&2
        exit 1
      fi
    done
    ;;
  stop)
    compose stop "$SERVICE"
    ;;
  reload)
    [ "$SERVICE" = nginx ] || { printf 'error: reload is for nginx only\n' >&2; exit 2; }
    id="$(container_id)"
    [ -n "$id" ] || { printf '%s: no nginx container to reload; start it: systemctl start %s\n' "$UNIT" "$UNIT" >&2; exit 1; }
    if ! out="$("$DOCKER_CMD" exec "$id" nginx -t 2>&1)"; then
      printf '%s: the new nginx configuration is invalid, nginx keeps serving the old one: %s\n' "$UNIT" "$(printf '%s' "$out" | tr '\n' ' ')" >&2
      exit 1
    fi
    "$DOCKER_CMD" exec "$id" nginx -s reload
    log "$UNIT: nginx reloaded its configuration and certificate"
    ;;
  -h | --help) usage ;;
  *) usage >&2; exit 2 ;;
esac
