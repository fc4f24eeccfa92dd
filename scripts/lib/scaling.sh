# shellcheck shell=bash
# scaling.sh — install.sh's part for several hosts on one PostgreSQL (issue 14 item 7,
# docs/scaling.md): --database-url and --role. Kept in this file so install.sh only parses the two
# flags and calls these functions.
#
# The URL's password is a secret: never an argument (argv is world-readable). --database-url takes
# the URL without it; the password comes from $PGPASSWORD, else the existing docket.env's
# DATABASE_URL (same user, host and database), else a hidden prompt.

SCALE_URL="" SCALE_ROLE=""
database_url="" # resolved by scaling_resolve (with its password; never printed)

# uri_encode TEXT — percent-encode every byte outside A-Z a-z 0-9 . _ ~ - (a password inside a URL).
uri_encode() {
  local LC_ALL=C s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [A-Za-z0-9._~-]) out+="$c" ;;
      *) printf -v c '%%%02X' "'$c"; out+="$c" ;;
    esac
  done
  printf '%s' "$out"
}

# scaling_resolve — check --role and --database-url against docket.env and set database_url.
scaling_resolve() {
  local current_url current_role u pass="" enc
  current_url="$(existing DATABASE_URL)"
  current_role="$(existing DOCKET_ROLE)"
  SCALE_ROLE="${SCALE_ROLE:-${current_role:-all}}"
  case "$SCALE_ROLE" in all | intake | worker) ;; *) die "--role $SCALE_ROLE: expected all, intake or worker" ;; esac
  if [ -n "$SCALE_URL" ]; then
    [[ "$SCALE_URL" =~ ^postgres(ql)?://[^/@:]+@[^/@]+/[A-Za-z0-9_.-]+$ ]] ||
      die "--database-url: expected postgres://USER@HOST:PORT/DATABASE, without the password (give it in PGPASSWORD)"
    u="${SCALE_URL#*://}"
    enc=""
    if [ -n "${PGPASSWORD:-}" ]; then
      enc="$(uri_encode "$PGPASSWORD")"
    elif [ -n "$current_url" ]; then
      # Same user@host/database as in docket.env: keep its (already encoded) password.
      local cu="${current_url#*://}"
      if [ "${cu%%:*}@${cu#*@}" = "$u" ]; then enc="${cu#*:}"; enc="${enc%%@*}"; fi
    fi
    if [ -z "$enc" ] && [ "$INTERACTIVE" = 1 ] && [ "$DRY_RUN" != 1 ]; then
      printf 'PostgreSQL password of %s (input hidden): ' "${u%%@*}" >/dev/tty
      IFS= read -rs pass </dev/tty || true
      printf '\n' >/dev/tty
      enc="$(uri_encode "$pass")"
    fi
    [ -n "$enc" ] || [ "$DRY_RUN" = 1 ] || need_input "--database-url: no password: set PGPASSWORD (or run interactively)"
    database_url="${SCALE_URL%%://*}://${u%%@*}:${enc}@${u#*@}"
    log "  database: PostgreSQL ${u#*@} as ${u%%@*} (password never printed)"
  else
    database_url="$current_url"
  fi
  if [ "$SCALE_ROLE" != all ] && [ -z "$database_url" ]; then
    die "--role $SCALE_ROLE needs PostgreSQL: give --database-url postgres://USER@HOST:PORT/DATABASE (hosts share work only through it; docs/scaling.md)"
  fi
  if [ "$SCALE_ROLE" = worker ] && [ "$WEBHOOK" = 1 ]; then
    die "--role worker never receives updates: drop --webhook/--webhook-url on a worker host (the intake host serves the webhook)"
  fi
  log "  role: $SCALE_ROLE${database_url:+ on PostgreSQL}"
}

# scaling_set_keys — inside render_env: DOCKET_ROLE and DATABASE_URL.
scaling_set_keys() {
  set_key DOCKET_ROLE "$SCALE_ROLE"
  if [ -n "$database_url" ]; then set_key DATABASE_URL "$database_url"; fi
}
