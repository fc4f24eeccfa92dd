# shellcheck shell=bash
# shellcheck disable=SC2034 # sets COMPOSE_CMD for the caller
# scripts/lib/containers.sh — docket's containers: which compose client, which file holds which
# service. Sourced by install.sh and container.sh (the units' helper).

# compose_client_detect — COMPOSE_CMD=(the compose client): DOCKER_COMPOSE when set, else the v2
# plugin (`docker compose`, Ubuntu's docker-compose-v2) when it answers, else v1
# (`docker-compose`, Debian 12), else empty.
compose_client_detect() {
  if [ -n "${DOCKER_COMPOSE:-}" ]; then
    COMPOSE_CMD=("$DOCKER_COMPOSE")
  elif command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
    COMPOSE_CMD=(docker compose)
  elif command -v docker-compose >/dev/null 2>&1; then
    COMPOSE_CMD=(docker-compose)
  else
    COMPOSE_CMD=()
  fi
}

# compose_file_of SERVICE — the compose file (under compose/) that defines SERVICE: each service
# has its own, so cloud mode with a webhook never needs the Bot API server's file or bot-api.env.
compose_file_of() {
  case "$1" in
    bot-api) printf 'docker-compose.yml' ;;
    nginx) printf 'webhook.yml' ;;
    *) return 1 ;;
  esac
}
