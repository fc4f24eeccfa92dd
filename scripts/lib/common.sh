# shellcheck shell=bash
# scripts/lib/common.sh — helpers shared by install.sh, disk-layout.sh, backup.sh and restore.sh.
#
# Sourced, never run. Conventions every caller follows:
#   DRY_RUN=1   print each action as "  + command" and change nothing.
#   ROOT=DIR    a throwaway root: every absolute system path goes through `rp` and lands under DIR.
#   Commands that touch the host outside ROOT can be replaced for tests through environment
#   variables: SYSTEMCTL, DOCKER_COMPOSE, APT_GET, NPM, USERADD, GROUPADD, CURL (e.g. SYSTEMCTL=/bin/true).

DRY_RUN="${DRY_RUN:-0}"
ROOT="${ROOT:-}"
STEP_NO=0

# log MESSAGE… — operator-facing progress line on stderr.
log() { printf '%s\n' "$*" >&2; }

# arg_value FLAG VALUE — print VALUE, the argument of FLAG; die naming FLAG when it is missing or
# is the next option (`--token-file --mode local` would otherwise read a file named "--mode").
# Use as VAR="$(arg_value "$1" "${2-}")" (set -e ends the script when it dies).
arg_value() {
  case "${2-}" in
    "") die "$1 needs a value (see --help)" ;;
    --*) die "$1 needs a value, not the option $2 (see --help)" ;;
  esac
  printf '%s' "$2"
}

# warn MESSAGE… — a problem that does not stop the script.
warn() { printf 'warning: %s\n' "$*" >&2; }

# die MESSAGE… — print and exit 1.
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# step TITLE — numbered step header; install.sh --dry-run prints one per step (asserted by tests).
# A script called by another gets STEP_PARENT (the caller's step number) and prints "5.1", "5.2"….
step() {
  STEP_NO=$((STEP_NO + 1))
  printf '==> step %s%d: %s\n' "${STEP_PARENT:+$STEP_PARENT.}" "$STEP_NO" "$*" >&2
}

# print_header FILE — the leading comment block of a script (its --help text), without "# ".
print_header() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}

# rp PATH — the path as seen inside ROOT ("" = the real system).
rp() { printf '%s%s' "$ROOT" "$1"; }

# show_cmd ARG… — print a command line shell-quoted, prefixed with "  + ".
show_cmd() {
  local out="  +" a
  for a in "$@"; do out+=" $(printf '%q' "$a")"; done
  printf '%s\n' "$out" >&2
}

# run ARG… — print the command; execute it unless DRY_RUN=1.
run() {
  show_cmd "$@"
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  "$@"
}

# skip WHY — announce a step part that is not done (dry-run, --root, mode …).
skip() { printf '  - skipped: %s\n' "$*" >&2; }

# write_file MODE DEST [OWNER] — write stdin to DEST atomically with MODE (and OWNER if given).
# The content is never printed (it may hold secrets); dry-run only names the file. The content
# goes first into a file created 0600 (umask 077) inside a private 0700 directory next to DEST
# (same file system), then is renamed over DEST: no other user can read it at any moment, and
# DEST is either the old file or the new one, never half written (issue 9 item 10).
write_file() {
  local mode="$1" dest="$2" owner="${3:-}" dir tmpdir
  printf '  + write %s (mode %s%s)\n' "$dest" "$mode" "${owner:+, owner $owner}" >&2
  if [ "$DRY_RUN" = 1 ]; then
    cat >/dev/null
    return 0
  fi
  dir="$(dirname "$dest")"
  mkdir -p "$dir"
  tmpdir="$(umask 077 && mktemp -d "$dir/.write.XXXXXX")"
  (umask 077 && cat >"$tmpdir/new") || { rm -rf "$tmpdir"; return 1; }
  chmod "$mode" "$tmpdir/new"
  if [ -n "$owner" ]; then chown "$owner" "$tmpdir/new"; fi
  mv -f "$tmpdir/new" "$dest"
  rmdir "$tmpdir"
}

# env_get FILE KEY — print KEY's value from a KEY=VALUE file (last one wins; quotes stripped).
# The file is parsed, never sourced, so a hostile value cannot run code.
env_get() {
  local file="$1" key="$2" line val=""
  [ -r "$file" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      "$key="*)
        val="${line#"$key="}"
        val="${val%\"}"
        val="${val#\"}"
        val="${val%\'}"
        val="${val#\'}"
        ;;
    esac
  done <"$file"
  printf '%s' "$val"
}

# env_set_text TEXT KEY VALUE — print TEXT (KEY=VALUE lines) with KEY set to VALUE, replaced in
# place or appended. Pure string work, no file: a secret being rendered never touches the disk.
env_set_text() {
  local text="$1" key="$2" value="$3" line found=0 out=""
  while [ -n "$text" ]; do
    line="${text%%$'\n'*}"
    if [ "$line" = "$text" ]; then text=""; else text="${text#*$'\n'}"; fi
    case "$line" in
      "$key="*)
        out+="$key=$value"$'\n'
        found=1
        ;;
      *) out+="$line"$'\n' ;;
    esac
  done
  if [ "$found" = 0 ]; then out+="$key=$value"$'\n'; fi
  printf '%s' "$out"
}

# env_del_text TEXT KEY… — print TEXT without the lines of the given keys (no file either).
env_del_text() {
  local text="$1" line out="" k drop
  shift
  while [ -n "$text" ]; do
    line="${text%%$'\n'*}"
    if [ "$line" = "$text" ]; then text=""; else text="${text#*$'\n'}"; fi
    drop=0
    for k in "$@"; do case "$line" in "$k="*) drop=1 ;; esac; done
    if [ "$drop" = 0 ]; then out+="$line"$'\n'; fi
  done
  printf '%s' "$out"
}

# parse_bytes SIZE — bytes from "4GB", "2000MB", "1.5GiB" or a plain count (binary units, as bot/config.ts).
parse_bytes() {
  local raw="${1// /}" num unit mult
  raw="${raw,,}"
  if [[ ! "$raw" =~ ^([0-9]+(\.[0-9]+)?)(b|kb|mb|gb|tb|kib|mib|gib|tib)?$ ]]; then
    return 1
  fi
  num="${BASH_REMATCH[1]}"
  unit="${BASH_REMATCH[3]:-b}"
  unit="${unit/i/}"
  case "$unit" in
    b) mult=1 ;;
    kb) mult=1024 ;;
    mb) mult=$((1024 ** 2)) ;;
    gb) mult=$((1024 ** 3)) ;;
    tb) mult=$((1024 ** 4)) ;;
  esac
  awk -v n="$num" -v m="$mult" 'BEGIN { printf "%.0f\n", n * m }'
}

# human_bytes N — "1.5 GiB"-style rendering for messages.
human_bytes() {
  awk -v n="$1" 'BEGIN { split("B KiB MiB GiB TiB", u, " "); i = 1; while (n >= 1024 && i < 5) { n /= 1024; i++ } printf "%.1f %s\n", n, u[i] }'
}

# free_bytes PATH — bytes available to unprivileged users on the file system holding PATH
# (or its nearest existing ancestor, so it works before the directory is created).
free_bytes() {
  local p="$1"
  while [ ! -e "$p" ] && [ "$p" != "/" ]; do p="$(dirname "$p")"; done
  df -P -B1 "$p" | awk 'NR == 2 { print $4 }'
}

# run_hooks DIR PHASE — run every executable regular file in DIR in name order (run-parts style),
# skipping editor backups and dotfiles. Stops at the first failing hook (returns its status).
run_hooks() {
  local dir="$1" phase="$2" hook status
  [ -d "$dir" ] || return 0
  for hook in "$dir"/*; do
    if [ ! -f "$hook" ] || [ ! -x "$hook" ]; then continue; fi
    case "$(basename "$hook")" in
      .* | *~ | *.dpkg-* | *.bak) continue ;;
    esac
    log "hook ($phase): $hook"
    if [ "$DRY_RUN" = 1 ]; then
      show_cmd "$hook"
      continue
    fi
    status=0
    "$hook" || status=$?
    if [ "$status" -ne 0 ]; then
      warn "hook $hook exited with $status"
      return "$status"
    fi
  done
  return 0
}

# installed_units UNIT… — the units of UNIT… that have a unit file in /etc/systemd/system (inside
# ROOT): a release may predate one of them, and systemctl fails on a unit it does not know. When
# docket's units are not installed there at all (units managed elsewhere), all of UNIT….
installed_units() {
  local dir u
  dir="$(rp /etc/systemd/system)"
  for u in "$@"; do
    if [ -e "$dir/$u" ] || [ ! -e "$dir/docket.service" ]; then printf '%s\n' "$u"; fi
  done
}

# user_exists NAME — true when the account exists on this host.
user_exists() { getent passwd "$1" >/dev/null 2>&1; }

# Account database: the host's (NSS, getent) normally; in a throwaway root ROOT's own /etc/passwd
# and /etc/group, which groupadd/useradd/usermod edit through `--prefix ROOT` (account_tool).
# account_id user|group NAME — the uid or gid of NAME, or "" when there is no such account.
account_id() {
  local kind="$1" name="$2" db
  case "$kind" in user) db=passwd ;; group) db=group ;; *) return 1 ;; esac
  if [ -n "$ROOT" ]; then
    [ -r "$ROOT/etc/$db" ] || return 0
    awk -F: -v n="$name" '$1 == n { print $3; exit }' "$ROOT/etc/$db"
  else
    { getent "$db" "$name" || true; } | cut -d: -f3
  fi
}

# group_has_member GROUP USER — true when USER is a supplementary member of GROUP.
group_has_member() {
  local line
  if [ -n "$ROOT" ]; then
    line="$(awk -F: -v n="$1" '$1 == n { print; exit }' "$ROOT/etc/group" 2>/dev/null)"
  else
    line="$(getent group "$1" || true)"
  fi
  case ",${line##*:}," in *",$2,"*) return 0 ;; *) return 1 ;; esac
}

# account_tool groupadd|useradd|usermod ARG… — run the shadow tool on the account database above
# (GROUPADD, USERADD, USERMOD replace the binaries).
account_tool() {
  local tool="$1" bin
  shift
  case "$tool" in
    groupadd) bin="${GROUPADD:-groupadd}" ;;
    useradd) bin="${USERADD:-useradd}" ;;
    usermod) bin="${USERMOD:-usermod}" ;;
  esac
  if [ -n "$ROOT" ]; then run "$bin" --prefix "$ROOT" "$@"; else run "$bin" "$@"; fi
}

# chown_named [-R] USER:GROUP PATH — chown by account name. The line printed names the accounts
# (a dry run, where they may not exist yet, prints the same line as the real run); the real run
# resolves them in the account database, so a throwaway root uses its own ids.
chown_named() {
  local rec=() owner uid gid
  if [ "$1" = -R ]; then rec=(-R); shift; fi
  owner="$1"
  show_cmd chown "${rec[@]}" "$owner" "$2"
  if [ "$DRY_RUN" = 1 ]; then return 0; fi
  uid="$(account_id user "${owner%%:*}")"
  gid="$(account_id group "${owner#*:}")"
  [ -n "$uid" ] || die "user ${owner%%:*} does not exist: scripts/install.sh creates it (step accounts)"
  [ -n "$gid" ] || die "group ${owner#*:} does not exist: scripts/install.sh creates it (step accounts)"
  chown "${rec[@]}" "$uid:$gid" "$2"
}

# normalize_root — make $ROOT (from --root) absolute without a trailing slash; empty stays empty.
normalize_root() {
  local abs
  ROOT="${ROOT%/}"
  [ -n "$ROOT" ] || return 0
  # Checked before the cd: a failed `ROOT=$(cd …)` would empty ROOT before the message names it.
  [ -d "$ROOT" ] || die "--root $ROOT does not exist (create the directory first)"
  abs="$(cd "$ROOT" 2>/dev/null && pwd)" || die "--root $ROOT cannot be entered"
  ROOT="$abs"
}
