#!/usr/bin/env bash
# backup.sh — consistent online backup of docket's SQLite database (and optionally results),
# kept on this disk with rotation and, when a restic repository is configured, copied off the box.
#
# Usage: backup.sh [--data-dir DIR] [--dest DIR] [--keep N] [--with-results]
#                  [--hooks-dir DIR] [--kind nightly|pre-upgrade] [--release ID] [--upgrade-to ID]
#                  [--no-restic] [--init-restic] [--root DIR] [--dry-run]
#
# Defaults come from the environment (docket-backup.service loads /etc/docket/docket.env and
# /etc/docket/restic.env):
#   DATA_DIR (/var/lib/docket), BACKUP_DIR (DATA_DIR/backups), BACKUP_KEEP (7),
#   BACKUP_KEEP_PRE_UPGRADE (3), BACKUP_WITH_RESULTS (false), BACKUP_HOOKS_DIR (/etc/docket/backup),
#   BACKUP_USER (docket: the user a run started by root continues as); restic: see
#   scripts/lib/restic.sh (RESTIC_REPOSITORY, the password file, BACKUP_KEEP_DAILY/WEEKLY/MONTHLY).
#
# What it does:
#   0. run by root, it continues as BACKUP_USER (after giving that user its own backups back), so
#      every backup and the rotation belong to one user however the run was started;
#   1. runs BACKUP_HOOKS_DIR/pre.d/* (a failing pre hook aborts the backup);
#   2. checks that DEST has room for the copy (database + -wal, and results with --with-results);
#   3. copies DATA_DIR/db/docket.sqlite with SQLite's online backup API (sqlite3 `.backup`):
#      a consistent snapshot while the bot keeps writing (WAL); checks PRAGMA integrity_check;
#   4. with --with-results, archives DATA_DIR/results into results.tar;
#   5. writes MANIFEST (kind, release, the drizzle migration the copy has applied, …) and
#      SHA256SUMS, then renames the directory into place (DEST/docket-YYYYmmddTHHMMSSZ, or
#      DEST/pre-upgrade-… for --kind pre-upgrade), so a half-written backup is never seen as one;
#   6. keeps the newest N docket-* backups and the newest BACKUP_KEEP_PRE_UPGRADE pre-upgrade-*
#      ones, and deletes older ones (nothing else in DEST is touched);
#   7. with a restic repository (nightly kind, unless --no-restic): `restic backup` of that
#      directory, then `restic forget --prune` with the daily/weekly/monthly retention;
#   8. runs post.d/* with BACKUP_PATH set; a failing post hook makes the script exit non-zero but
#      keeps the backup;
#   9. records the result (DATA_DIR/backups/status.json) and, on any failure, alerts the admins
#      (`docket notify backup_failed`): a failure is one `error:` line, never a silent success.
# --kind pre-upgrade is what install.sh takes before it moves /opt/docket/current: --release names
# the release the database comes from, --upgrade-to the one being installed (docs/upgrading.md);
# it stays on this disk and does not touch the status file. --init-restic creates the repository
# (restic init) and exits. --dry-run prints the steps and checks what a real run needs (restic,
# its password, that the repository opens, free space) without writing anything.
# Hooks get BACKUP_PHASE (pre|post), BACKUP_DIR, BACKUP_PATH (post only), DATA_DIR.
# Progress (restic) is drawn on a terminal only; under systemd each step is one line.
set -euo pipefail
umask 027
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
. "$HERE/lib/common.sh"
# shellcheck source=scripts/lib/release.sh
. "$HERE/lib/release.sh"
# shellcheck source=scripts/lib/restic.sh
. "$HERE/lib/restic.sh"
# shellcheck source=scripts/lib/report.sh
. "$HERE/lib/report.sh"

usage() { print_header "${BASH_SOURCE[0]}"; }

ARGS=("$@")
DATA_DIR="${DATA_DIR:-/var/lib/docket}"
DEST="${BACKUP_DIR:-}"
KEEP="${BACKUP_KEEP:-7}"
KEEP_PRE_UPGRADE="${BACKUP_KEEP_PRE_UPGRADE:-3}"
WITH_RESULTS="${BACKUP_WITH_RESULTS:-false}"
HOOKS_DIR="${BACKUP_HOOKS_DIR:-/etc/docket/backup}"
KIND=nightly RELEASE="" UPGRADE_TO="" USE_RESTIC=1 INIT_RESTIC=0
KEEP_DAILY="${BACKUP_KEEP_DAILY:-7}" KEEP_WEEKLY="${BACKUP_KEEP_WEEKLY:-4}" KEEP_MONTHLY="${BACKUP_KEEP_MONTHLY:-6}"

while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) DATA_DIR="$(arg_value "$1" "${2-}")"; shift ;;
    --dest) DEST="$(arg_value "$1" "${2-}")"; shift ;;
    --keep) KEEP="$(arg_value "$1" "${2-}")"; shift ;;
    --with-results) WITH_RESULTS=true ;;
    --hooks-dir) HOOKS_DIR="$(arg_value "$1" "${2-}")"; shift ;;
    --kind) KIND="${2:?--kind needs nightly or pre-upgrade}"; shift ;;
    --release) RELEASE="$(arg_value "$1" "${2-}")"; shift ;;
    --upgrade-to) UPGRADE_TO="$(arg_value "$1" "${2-}")"; shift ;;
    --no-restic) USE_RESTIC=0 ;;
    --init-restic) INIT_RESTIC=1 ;;
    --root) ROOT="$(arg_value "$1" "${2-}")"; shift ;;
    --dry-run) DRY_RUN=1 ;;
    --quiet) ;; # accepted for BACKUP_ARGS compatibility; output goes to the journal anyway
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
ROOT="${ROOT%/}"
DEST="${DEST:-$DATA_DIR/backups}"
{ [[ "$KEEP" =~ ^[0-9]+$ ]] && [ "$KEEP" -ge 1 ]; } || die "--keep must be a whole number ≥ 1, not '$KEEP'"
{ [[ "$KEEP_PRE_UPGRADE" =~ ^[0-9]+$ ]] && [ "$KEEP_PRE_UPGRADE" -ge 1 ]; } || die "BACKUP_KEEP_PRE_UPGRADE must be a whole number ≥ 1, not '$KEEP_PRE_UPGRADE'"
case "$WITH_RESULTS" in true | 1 | yes) WITH_RESULTS=true ;; *) WITH_RESULTS=false ;; esac
case "$KIND" in nightly) prefix=docket ;; pre-upgrade) prefix=pre-upgrade ;; *) die "--kind must be nightly or pre-upgrade, not '$KIND'" ;; esac
for k in KEEP_DAILY KEEP_WEEKLY KEEP_MONTHLY; do
  [[ "${!k}" =~ ^[0-9]+$ ]] || die "BACKUP_$k must be a whole number, not '${!k}'"
done
db="$(rp "$DATA_DIR/db/docket.sqlite")"
dest="$(rp "$DEST")"
hooks="$(rp "$HOOKS_DIR")"
case "$db$dest" in *"'"*) die "paths with a single quote are not supported" ;; esac
restic_load_config
if [ "$USE_RESTIC" = 0 ] || [ "$KIND" != nightly ]; then RESTIC_ON=0; fi
WHERE=local
if [ "$RESTIC_ON" = 1 ]; then WHERE=restic; fi

# fail MESSAGE… — a failed run: one error line, the status file and an alert (nightly kind), exit 1.
fail() {
  printf 'error: %s\n' "$*" >&2
  if [ "$KIND" = nightly ]; then
    report_status backup --failed --where "$WHERE" --error "$*"
    alert backup_failed "backup failed: $*"
  fi
  exit 1
}

# 0. One owner for every backup: a run started by root continues as BACKUP_USER (default docket on
# a real host; none in a --root test unless BACKUP_USER is set). Root first gives that user the
# entries this script makes, so rotation never meets a root-owned backup it cannot delete.
run_as="${BACKUP_USER-}"
if [ -z "${BACKUP_USER+set}" ] && [ -z "$ROOT" ]; then run_as=docket; fi
if [ "$(id -u)" = 0 ] && [ -n "$run_as" ] && user_exists "$run_as" && [ "$DRY_RUN" != 1 ]; then
  log "running as $run_as (backups and their rotation belong to one user)"
  mkdir -p "$dest"
  chown "$run_as:$run_as" "$dest"
  find "$dest" -mindepth 1 -maxdepth 1 \( -name 'docket-*' -o -name 'pre-upgrade-*' -o -name '.docket-*' \
    -o -name '.pre-upgrade-*' -o -name 'status.json' -o -name '.backup.lock' \) -exec chown -R "$run_as:$run_as" {} +
  restic_pass_password
  exec setpriv --reuid="$run_as" --regid="$run_as" --init-groups -- env BACKUP_USER= bash "${BASH_SOURCE[0]}" "${ARGS[@]}"
fi

if [ "$INIT_RESTIC" = 1 ]; then
  [ "${RESTIC_REPOSITORY:-}${RESTIC_REPOSITORY_FILE:-}" != "" ] || die "no restic repository configured: set RESTIC_REPOSITORY in $(rp "$RESTIC_ENV_FILE") (docs/backup.md)"
  problem="$(restic_check_ready)"
  [ -z "$problem" ] || die "$problem"
  step "restic init $(restic_where)"
  if [ "$DRY_RUN" = 1 ]; then
    show_cmd restic init
    exit 0
  fi
  RESTIC_ERR="$(mktemp)"
  if restic_run init >/dev/null; then
    log "created the restic repository $(restic_where)"
  elif grep -q 'config file already exists' "$RESTIC_ERR"; then
    log "the restic repository $(restic_where) exists already"
  else
    msg="$(restic_explain "$RESTIC_ERR")"
    rm -f "$RESTIC_ERR"
    die "$msg"
  fi
  rm -f "$RESTIC_ERR"
  exit 0
fi

command -v sqlite3 >/dev/null 2>&1 || fail "sqlite3 is not installed (apt-get install sqlite3)"
[ -f "$db" ] || fail "no database at $db"

# One backup at a time in DEST: the lock also makes leftovers of an interrupted run safe to delete.
if [ "$DRY_RUN" != 1 ]; then
  mkdir -p "$dest"
  { exec 9>>"$dest/.backup.lock"; } 2>/dev/null ||
    die "cannot open $dest/.backup.lock (owner $(stat -c %U "$dest/.backup.lock" 2>/dev/null || echo '?')): run backup.sh once as root, which gives the backups to ${BACKUP_USER:-docket}"
  flock -n 9 || die "another backup is running in $dest (lock $dest/.backup.lock); try again when it is done"
  for stale in "$dest"/.docket-*.partial "$dest"/.pre-upgrade-*.partial; do
    if [ -e "$stale" ]; then
      log "removing the leftover of an interrupted backup: $stale"
      rm -rf "$stale" 2>/dev/null || warn "cannot remove $stale (owner $(stat -c %U "$stale" 2>/dev/null || echo '?')): run backup.sh once as root, which gives the backups to $(id -un)"
    fi
  done
fi

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
# Two backups in the same second get -2, -3 …, after the highest one of that second still there,
# so names keep sorting oldest → newest even when rotation removed a lower one.
n=0
for taken in "$dest/$prefix-$stamp" "$dest/$prefix-$stamp"-* "$dest/.$prefix-$stamp.partial" "$dest/.$prefix-$stamp"-*.partial; do
  [ -e "$taken" ] || continue
  suffix="${taken##*/}"
  suffix="${suffix%.partial}"
  suffix="${suffix#.}"
  suffix="${suffix#"$prefix-$stamp"}"
  suffix="${suffix#-}"
  if [ -z "$suffix" ]; then suffix=1; fi
  if [[ "$suffix" =~ ^[0-9]+$ ]] && [ "$suffix" -gt "$n" ]; then n="$suffix"; fi
done
if [ "$n" = 0 ]; then name="$prefix-$stamp"; else name="$prefix-$stamp-$((n + 1))"; fi
final="$dest/$name"
work="$dest/.$name.partial"
RELEASE="${RELEASE:-$(current_release)}"

export BACKUP_DIR="$dest" DATA_DIR
export BACKUP_PHASE=pre
step "pre hooks ($hooks/pre.d)"
run_hooks "$hooks/pre.d" pre || fail "a pre hook failed; no backup taken"

# size_of PATH… — bytes of the files and trees named (0 for a missing one).
size_of() {
  local total=0 p n
  for p in "$@"; do
    if [ -e "$p" ]; then
      n="$(du -sb "$p" | cut -f1)"
      total=$((total + n))
    fi
  done
  printf '%s' "$total"
}
step "free space in $DEST"
need="$(size_of "$db" "$db-wal")"
if [ "$WITH_RESULTS" = true ]; then need=$((need + $(size_of "$(rp "$DATA_DIR/results")"))); fi
need=$((need + need / 10 + 16 * 1024 * 1024)) # 10 % and 16 MiB of margin
free="$(free_bytes "$dest")"
if [ "$free" -lt "$need" ]; then
  fail "not enough free space in $DEST for the backup: it needs about $(human_bytes "$need"), $(human_bytes "$free") are free; free space there, lower BACKUP_KEEP, or set BACKUP_DIR to another disk"
fi
log "  needs about $(human_bytes "$need"), $(human_bytes "$free") free"

step "online SQLite backup of $DATA_DIR/db/docket.sqlite"
run mkdir -p "$work"
# .timeout waits for a writer's lock instead of failing with SQLITE_BUSY.
run sqlite3 "$db" ".timeout 20000" ".backup '$work/docket.sqlite'"
if [ "$DRY_RUN" != 1 ]; then
  # The copy keeps the source's WAL mode; a rollback-journal file is one self-contained file that
  # opens read-only anywhere (the bot turns WAL on again when it opens a restored copy).
  sqlite3 "$work/docket.sqlite" "PRAGMA journal_mode = DELETE;" >/dev/null
  check="$(sqlite3 "$work/docket.sqlite" "PRAGMA integrity_check;")"
  if [ "$check" != ok ]; then
    rm -rf "$work"
    fail "integrity_check of the copy failed: ${check:0:500}"
  fi
  log "  integrity_check: ok"
fi

step "results ($([ "$WITH_RESULTS" = true ] && echo included || echo 'skipped; --with-results to include'))"
if [ "$WITH_RESULTS" = true ]; then
  if [ -d "$(rp "$DATA_DIR/results")" ]; then
    run tar -C "$(rp "$DATA_DIR")" -cf "$work/results.tar" results
  else
    skip "no results directory"
  fi
fi

# write_manifest DIR — MANIFEST of the backup in DIR: what it is, which release wrote the
# database, and the drizzle migration the copy has applied (named by the journal of that release).
write_manifest() {
  local dir="$1" count created hash
  read -r count created hash < <(db_latest_migration "$dir/docket.sqlite")
  {
    printf 'created_at=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf 'kind=%s\n' "$KIND"
    printf 'host=%s\n' "$(hostname 2>/dev/null || echo '?')"
    printf 'data_dir=%s\n' "$DATA_DIR"
    printf 'release=%s\n' "${RELEASE:-unknown}"
    if [ -n "$UPGRADE_TO" ]; then printf 'upgrade_to=%s\n' "$UPGRADE_TO"; fi
    printf 'migration=%s\n' "$(migration_name "$(release_dir "$RELEASE")" "$created")"
    printf 'migration_created_at=%s\n' "$created"
    printf 'migration_hash=%s\n' "$hash"
    printf 'migrations_applied=%s\n' "$count"
    printf 'sqlite_version=%s\n' "$(sqlite3 --version | cut -d' ' -f1)"
    printf 'with_results=%s\n' "$WITH_RESULTS"
  } >"$dir/MANIFEST"
}

step "manifest and checksums"
if [ "$DRY_RUN" != 1 ]; then
  write_manifest "$work"
  (cd "$work" && sha256sum -- * >SHA256SUMS)
  chmod 0640 "$work"/*
  log "  release ${RELEASE:-unknown}, migration $(manifest_get "$work/MANIFEST" migration)"
fi
run mv "$work" "$final"
log "  backup: $final"

# rotate PATTERN KEEP — delete all but the newest KEEP directories named PATTERN in DEST.
rotation_failed=""
rotate() {
  local pattern="$1" keep="$2" count=0 old
  while IFS= read -r old; do
    count=$((count + 1))
    if [ "$count" -le "$keep" ]; then continue; fi
    if ! run rm -rf "${dest:?}/$old"; then
      rotation_failed="cannot delete $dest/$old (owner $(stat -c %U "$dest/$old" 2>/dev/null || echo '?')): run backup.sh once as root, which gives every backup to $(id -un), or delete it by hand"
      warn "$rotation_failed"
    fi
  done < <(cd "$dest" 2>/dev/null && find . -mindepth 1 -maxdepth 1 -type d -name "$pattern" -printf '%f\n' | LC_ALL=C sort -r)
}
step "rotation (keep $KEEP nightly, $KEEP_PRE_UPGRADE pre-upgrade)"
rotate 'docket-*' "$KEEP"
rotate 'pre-upgrade-*' "$KEEP_PRE_UPGRADE"

# restic_progress — read `restic backup --json` lines: draw the progress on a terminal, keep the
# summary line in $RESTIC_SUMMARY (a file). Nothing is printed off a terminal.
restic_progress() {
  local line pct
  while IFS= read -r line; do
    case "$line" in
      *'"message_type":"status"'*)
        if [ -t 2 ]; then
          pct="$(printf '%s' "$line" | sed -n 's/.*"percent_done":\([0-9.]*\).*/\1/p')"
          printf '\r\033[K  restic: %s %%' "$(awk -v p="${pct:-0}" 'BEGIN { printf "%.0f", p * 100 }')" >&2
        fi
        ;;
      *'"message_type":"summary"'*) printf '%s\n' "$line" >"$RESTIC_SUMMARY" ;;
    esac
  done
  if [ -t 2 ]; then printf '\r\033[K' >&2; fi
}
# json_field JSON KEY — a number or string field of one JSON line (restic's flat messages).
json_field() { printf '%s' "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }

step "off-box copy with restic"
if [ "$RESTIC_ON" != 1 ]; then
  if [ "$KIND" != nightly ]; then
    skip "a $KIND backup stays on this disk"
  elif [ "$USE_RESTIC" = 0 ]; then
    skip "--no-restic"
  else
    skip "no restic repository (RESTIC_REPOSITORY in /etc/docket/restic.env, docs/backup.md): this disk holds the only copy"
  fi
else
  problem="$(restic_check_ready)"
  [ -z "$problem" ] || fail "$problem; the local backup is at $final"
  RESTIC_ERR="$(mktemp)"
  RESTIC_SUMMARY="$(mktemp)"
  trap 'rm -f "$RESTIC_ERR" "$RESTIC_SUMMARY"' EXIT
  log "  repository $(restic_where), host $RESTIC_HOST"
  if [ "$DRY_RUN" = 1 ]; then
    show_cmd restic backup --host "$RESTIC_HOST" --tag docket "(the files of $final)"
    show_cmd restic forget --host "$RESTIC_HOST" --tag docket --group-by host --keep-daily "$KEEP_DAILY" --keep-weekly "$KEEP_WEEKLY" --keep-monthly "$KEEP_MONTHLY" --prune
    # What a real run needs: the repository opens with this password.
    restic_run snapshots --host "$RESTIC_HOST" --tag docket --latest 1 --json >/dev/null || fail "$(restic_explain "$RESTIC_ERR")"
    log "  the repository opens"
  else
    (cd "$final" && restic_run backup --json --host "$RESTIC_HOST" --tag docket .) | restic_progress ||
      fail "$(restic_explain "$RESTIC_ERR"); the local backup is at $final"
    summary="$(cat "$RESTIC_SUMMARY")"
    snapshot="$(json_field "$summary" snapshot_id)"
    [ -n "$snapshot" ] || fail "restic backup gave no snapshot id: $(restic_explain "$RESTIC_ERR"); the local backup is at $final"
    log "  restic snapshot $snapshot saved ($(human_bytes "$(json_field "$summary" data_added)") new in the repository)"
    restic_run forget --host "$RESTIC_HOST" --tag docket --group-by host \
      --keep-daily "$KEEP_DAILY" --keep-weekly "$KEEP_WEEKLY" --keep-monthly "$KEEP_MONTHLY" --prune --quiet >/dev/null ||
      fail "retention (restic forget --prune): $(restic_explain "$RESTIC_ERR"); snapshot $snapshot was saved"
    log "  retention: daily $KEEP_DAILY, weekly $KEEP_WEEKLY, monthly $KEEP_MONTHLY"
  fi
fi

export BACKUP_PHASE=post BACKUP_PATH="$final"
step "post hooks ($hooks/post.d)"
post_status=0
run_hooks "$hooks/post.d" post || post_status=$?
if [ "$post_status" -ne 0 ]; then
  fail "a post hook failed (status $post_status); the backup itself is at $final"
fi
if [ -n "$rotation_failed" ]; then fail "rotation: $rotation_failed; the backup itself is at $final"; fi
if [ "$KIND" = nightly ]; then
  bytes=0
  if [ "$DRY_RUN" != 1 ]; then bytes="$(size_of "$final")"; fi
  report_status backup --ok --where "$WHERE" --bytes "$bytes"
fi
log "backup done: $final$([ "$WHERE" = restic ] && [ "$DRY_RUN" != 1 ] && echo " and restic snapshot $snapshot")"
