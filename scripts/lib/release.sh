# shellcheck shell=bash
# scripts/lib/release.sh — releases and their database migrations, for backup.sh, rollback.sh and
# install.sh's upgrade step. Sourced after common.sh (uses rp, log). Never sourced alone.
#
# A release is a directory /opt/docket/releases/<version>-<content hash>; /opt/docket/current links
# to the one that runs. The schema of a database is the drizzle migration it has applied: drizzle
# records each in the table __drizzle_migrations (hash = SHA-256 of the SQL file, created_at = the
# journal's "when"); SQLite's user_version stays 0 (drizzle never sets it). A release lists its
# migrations in bot/db/migrations/meta/_journal.json ("when" and "tag" of each entry).

APP_DIR="${APP_DIR:-/opt/docket}"

# current_release — the id of the release /opt/docket/current points at; "" when there is none.
current_release() {
  local link
  link="$(readlink "$(rp "$APP_DIR/current")" 2>/dev/null)" || return 0
  printf '%s' "${link##*/}"
}

# release_dir ID — the directory of release ID (inside ROOT).
release_dir() { printf '%s' "$(rp "$APP_DIR/releases/$1")"; }

# db_latest_migration DB — "<count> <created_at> <hash>" of the newest migration DB has applied,
# "0 0 -" when it has none (no __drizzle_migrations table, or an empty one).
db_latest_migration() {
  local db="$1" has row
  has="$(sqlite3 -readonly "$db" "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations';")"
  if [ "$has" != 1 ]; then
    printf '0 0 -\n'
    return 0
  fi
  row="$(sqlite3 -readonly -separator ' ' "$db" \
    "SELECT (SELECT count(*) FROM __drizzle_migrations), created_at, hash FROM __drizzle_migrations ORDER BY created_at DESC LIMIT 1;")"
  printf '%s\n' "${row:-0 0 -}"
}

# journal_tag RELEASE_DIR WHEN — the tag of the journal entry with "when": WHEN ("" if none).
journal_tag() {
  local journal="$1/bot/db/migrations/meta/_journal.json"
  [ -r "$journal" ] || return 0
  awk -F'"' -v w="$2" '$2 == "when" { v = $3; gsub(/[^0-9]/, "", v); when = v } $2 == "tag" && when == w { print $4; exit }' "$journal"
}

# journal_latest RELEASE_DIR — "<when> <tag>" of the release's newest migration ("0 none" if none).
journal_latest() {
  local journal="$1/bot/db/migrations/meta/_journal.json" out
  out=""
  if [ -r "$journal" ]; then
    out="$(awk -F'"' '$2 == "when" { v = $3; gsub(/[^0-9]/, "", v); when = v } $2 == "tag" && when + 0 >= best + 0 { best = when; tag = $4 } END { if (tag != "") print best, tag }' "$journal")"
  fi
  printf '%s\n' "${out:-0 none}"
}

# migration_name RELEASE_DIR WHEN — the tag of WHEN in that release's journal, "none" for 0,
# "unknown (created_at WHEN)" when the release does not list it (a newer release made it).
migration_name() {
  local tag
  if [ "$2" = 0 ]; then
    printf 'none'
    return 0
  fi
  tag="$(journal_tag "$1" "$2")"
  printf '%s' "${tag:-unknown (created_at $2)}"
}

# manifest_get FILE KEY — KEY's value in a backup MANIFEST (KEY=VALUE lines); "" when absent.
manifest_get() { env_get "$1" "$2"; }
