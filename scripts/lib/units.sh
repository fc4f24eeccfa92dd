# shellcheck shell=bash
# scripts/lib/units.sh — install.sh's systemd units and drop-ins (sourced by install.sh only; it
# uses install.sh's settings: SRC, UNIT_DIR, DATA_DIR, DEFAULT_DATA_DIR, BOT_API_DIR, MODE, …).
#
# Nothing half-applied (issue 9, "Bad input and faults"): every unit and drop-in is first written
# into a private staging directory next to the units; only when all of them are there are they
# moved into place, one rename each. A failure before that leaves the old units untouched.

UNIT_STAGE=""           # the staging directory (empty in a dry run)
UNIT_REMOVE=()          # relative paths to remove once the new set is in place

# stage_unit REL — stage stdin as UNIT_DIR/REL (mode 0644). Prints the file it will become.
# (It may run in a pipeline's subshell: what is staged is read back from the directory.)
stage_unit() {
  local rel="$1"
  printf '  + write %s (mode 0644)\n' "$(rp "$UNIT_DIR/$rel")" >&2
  if [ "$DRY_RUN" = 1 ]; then
    cat >/dev/null
    return 0
  fi
  mkdir -p "$(dirname "$UNIT_STAGE/$rel")"
  cat >"$UNIT_STAGE/$rel"
  chmod 0644 "$UNIT_STAGE/$rel"
}

# unstage_unit REL — UNIT_DIR/REL goes away with the new set (a drop-in no longer needed).
unstage_unit() {
  if [ -e "$(rp "$UNIT_DIR/$1")" ]; then UNIT_REMOVE+=("$1"); fi
}

# data_dir_dropins — ReadWritePaths/ReadOnlyPaths for a DATA_DIR (or a Bot API --dir) that is
# not the default the units name (issue 9 item 6); removed again when back at the defaults.
data_dir_dropins() {
  local d
  if [ "$DATA_DIR" = "$DEFAULT_DATA_DIR" ] && [ "$BOT_API_DIR" = "$DEFAULT_DATA_DIR/bot-api" ]; then
    for d in docket.service.d docket-janitor.service.d docket-backup.service.d docket-backup-verify.service.d docket-alert@.service.d; do unstage_unit "$d/20-data-dir.conf"; done
    return 0
  fi
  for d in docket.service.d docket-janitor.service.d; do
    printf '[Service]\n# DATA_DIR is %s, the local Bot API server'"'"'s --dir %s (install.sh --data-dir).\nReadWritePaths=\nReadWritePaths=%s/db %s/downloads %s/work %s/results\nReadOnlyPaths=\nReadOnlyPaths=-%s\n' \
      "$DATA_DIR" "$BOT_API_DIR" "$DATA_DIR" "$DATA_DIR" "$DATA_DIR" "$DATA_DIR" "$BOT_API_DIR" | stage_unit "$d/20-data-dir.conf"
  done
  for d in docket-backup.service.d docket-backup-verify.service.d; do
    printf '[Service]\n# DATA_DIR is %s (install.sh --data-dir).\nReadWritePaths=\nReadWritePaths=%s/db %s/backups\n' "$DATA_DIR" "$DATA_DIR" "$DATA_DIR" |
      stage_unit "$d/20-data-dir.conf"
  done
  # The alert unit (docket notify unit_failed) writes the alert row into the database only.
  printf '[Service]\n# DATA_DIR is %s (install.sh --data-dir).\nReadWritePaths=\nReadWritePaths=%s/db\n' "$DATA_DIR" "$DATA_DIR" |
    stage_unit "docket-alert@.service.d/20-data-dir.conf"
}

# Sizing of docket.service (docs/sizing.md, measured with bench/units/resources.ts): the bot
# itself peaks at ≈ 95 MB resident with 9 threads, a warm processing child at ≈ 250 MB with 18
# on 2 vCPUs; a child is capped at PROCESS_MEMORY_MB by the pool. Threads grow with the cores
# (Bun's and libvips' pools), so the allowances below do too.
BOT_ALLOWANCE_MB=128        # the bot process, above its measured ≈ 95 MB peak
OS_RESERVE_MB=512           # left to the OS, sshd and journald whatever docket is set to
BOT_API_MEMORY_MB=1024      # the local server container's mem_limit (compose DOCKET_BOT_API_MEMORY default)
NGINX_MEMORY_MB=128         # the webhook nginx container's mem_limit (DOCKET_NGINX_MEMORY default)
TESSERACT_MEMORY_MB=256     # the pool's OCR allowance per concurrent Tesseract (bot/worker/process-step.ts TESSERACT_ALLOWANCE_MB)

# pool_worst_mb CONC MEM OCR — the bot's worst case in MB: its own allowance plus every processing
# slot at its cap with the OCR allowance of its Tesseracts granted (processors/pool stage allowance).
pool_worst_mb() {
  echo $((BOT_ALLOWANCE_MB + $1 * ($2 + $3 * TESSERACT_MEMORY_MB)))
}

# resources_dropin — MemoryHigh/MemoryMax/TasksMax of docket.service from the pool's settings
# (docket.env, else their defaults) and this host's memory and cores:
#   MemoryHigh = bot allowance + PROCESS_CONCURRENCY × (PROCESS_MEMORY_MB + OCR_CONCURRENCY × 256)
#                (every slot at its cap, the OCR allowance included: a slot recognizing a scan may use
#                its cap plus 256 MB per Tesseract; above it the kernel reclaims and throttles),
#                MemoryMax = MemoryHigh × 1.25,
#   both at most RAM − OS reserve − the containers' limits (local server, nginx);
#   TasksMax   = (32 + 4 × cores) + 2 × PROCESS_CONCURRENCY × (24 + 4 × cores + 4 × OCR_CONCURRENCY):
#                a retiring child and its replacement may live side by side for a moment, and each
#                slot may run OCR_CONCURRENCY Tesseracts (OMP_THREAD_LIMIT=1: a few threads each).
# OCR_CONCURRENCY defaults to the cores, as in bot/config.ts.
# Re-run install.sh after changing PROCESS_CONCURRENCY, PROCESS_MEMORY_MB or OCR_CONCURRENCY.
resources_dropin() {
  local conc mem ocr cores total_kb ram cap high max tasks note=""
  cores="$(nproc 2>/dev/null || echo 1)"
  conc="$(existing PROCESS_CONCURRENCY)"
  conc="${conc:-$cores}"
  mem="$(existing PROCESS_MEMORY_MB)"
  mem="${mem:-1024}"
  ocr="$(existing OCR_CONCURRENCY)"
  ocr="${ocr:-$cores}"
  high="$(pool_worst_mb "$conc" "$mem" "$ocr")"
  max=$((high * 5 / 4))
  total_kb="$(awk '/^MemTotal:/ { print $2 }' "$(host_file /proc/meminfo)" 2>/dev/null || echo 0)"
  ram=$((total_kb / 1024))
  cap=$((ram - OS_RESERVE_MB))
  if [ "$MODE" = local ]; then cap=$((cap - BOT_API_MEMORY_MB)); fi
  if [ "$WEBHOOK" = 1 ]; then cap=$((cap - NGINX_MEMORY_MB)); fi
  if [ "$cap" -lt 512 ]; then cap=512; fi # a host this small is warned about in the preflight
  if [ "$ram" -gt 0 ] && [ "$max" -gt "$cap" ]; then
    note=" (capped by this host's $ram MB)"
    warn "PROCESS_CONCURRENCY=$conc × (PROCESS_MEMORY_MB=$mem + OCR_CONCURRENCY=$ocr × ${TESSERACT_MEMORY_MB} MB) needs MemoryMax=${max}M, more than this host can give docket (${cap}M after the OS and the containers): MemoryMax=${cap}M; lower PROCESS_MEMORY_MB, PROCESS_CONCURRENCY or OCR_CONCURRENCY in $ETC/docket.env (docs/sizing.md)"
    max="$cap"
    if [ "$high" -gt $((max * 9 / 10)) ]; then high=$((max * 9 / 10)); fi
  fi
  tasks=$(((32 + 4 * cores) + 2 * conc * (24 + 4 * cores + 4 * ocr)))
  printf '[Service]
# Sized by install.sh for PROCESS_CONCURRENCY=%s, PROCESS_MEMORY_MB=%s, OCR_CONCURRENCY=%s, %s cores%s (docs/sizing.md).
MemoryHigh=%sM
MemoryMax=%sM
TasksMax=%s
' \
    "$conc" "$mem" "$ocr" "$cores" "$note" "$high" "$max" "$tasks" | stage_unit docket.service.d/30-resources.conf
  log "  docket.service: MemoryHigh=${high}M MemoryMax=${max}M TasksMax=$tasks$note"
}

# install_units — stage the shipped units and the drop-ins, then move the whole set into place.
install_units() {
  local udir u rel name
  udir="$(rp "$UNIT_DIR")"
  run mkdir -p "$udir"
  if [ "$DRY_RUN" != 1 ]; then UNIT_STAGE="$(umask 077 && mktemp -d "$udir/.docket-units.XXXXXX")"; fi
  for u in "$SRC"/systemd/*.service "$SRC"/systemd/*.timer; do
    name="$(basename "$u")"
    stage_unit "$name" <"$u"
  done
  data_dir_dropins
  resources_dropin
  if [ "$DRY_RUN" = 1 ]; then
    for rel in "${UNIT_REMOVE[@]}"; do show_cmd rm -f "$udir/$rel"; done
    return 0
  fi
  while IFS= read -r rel; do
    mkdir -p "$(dirname "$udir/$rel")"
    mv -f "$UNIT_STAGE/$rel" "$udir/$rel"
  done < <(cd "$UNIT_STAGE" && find . -type f | sed 's|^\./||' | LC_ALL=C sort)
  rm -rf "$UNIT_STAGE"
  for rel in "${UNIT_REMOVE[@]}"; do run rm -f "$udir/$rel"; done
}
