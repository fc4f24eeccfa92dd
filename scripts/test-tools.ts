/**
 * The Debian tools the test suites use, in one table: the tool's name as suites ask for it, the
 * Debian packages that bring it, and how it is found on this machine.
 *
 * `bun run test` (scripts/test.ts) reads this table before vitest starts: missing packages are
 * installed when it can (root with apt-get, through scripts/ci-tools.sh), and every tool still
 * missing is reported. Suites ask `toolReady(name)` (test/support/tools.ts) and are skipped with
 * a line naming the package when the tool is absent. Issue 9 item 1: a fresh machine with only
 * Node and npm runs the README's test command and nothing else.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** One tool a suite can ask for. */
export interface TestTool {
  /** Debian packages that provide it (all are installed together). */
  readonly packages: readonly string[];
  /** What the suites do with it (printed with a skip). */
  readonly for: string;
  /** The tool's executable path on this machine, or null when it is absent. */
  find(): string | null;
}

/** Directories searched besides PATH: an unprivileged user's PATH often lacks the sbin ones. */
const EXTRA_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/** `name` on PATH or in the usual system directories; null when absent. */
export function whichTool(name: string): string | null {
  const onPath = Bun.which(name);
  if (onPath) return onPath;
  for (const dir of EXTRA_DIRS) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

/** A finder for a plain executable name. */
const bin = (name: string) => () => whichTool(name);

/**
 * PostgreSQL's server binary directory: Debian installs `postgres`, `initdb` and `pg_ctl` under
 * /usr/lib/postgresql/<major>/bin, off PATH. The highest installed major wins.
 * @returns the path of `postgres`, or null when no server is installed
 */
export function findPostgres(): string | null {
  const base = "/usr/lib/postgresql";
  if (existsSync(base)) {
    const majors = readdirSync(base).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const m of majors) {
      const p = join(base, m, "bin", "postgres");
      if (existsSync(p) && existsSync(join(base, m, "bin", "initdb"))) return p;
    }
  }
  const onPath = whichTool("postgres");
  return onPath && whichTool("initdb") ? onPath : null;
}

/** Tesseract's data directories Debian uses (tesseract-ocr-<lang> packages). */
const TESSDATA_DIRS = ["/usr/share/tesseract-ocr/5/tessdata", "/usr/share/tesseract-ocr/4.00/tessdata", "/usr/share/tessdata"];

/**
 * `tesseract` with both languages docket recognizes by default (`rus`, `eng`): the binary alone
 * is not enough for the OCR suites.
 * @returns the path of `tesseract`, or null when it or a language's data is absent
 */
export function findTesseract(): string | null {
  const exe = whichTool("tesseract");
  if (!exe) return null;
  const hasLang = (l: string) => TESSDATA_DIRS.some((d) => existsSync(join(d, `${l}.traineddata`)));
  return hasLang("rus") && hasLang("eng") ? exe : null;
}

/**
 * A compose client that can run `config` without an engine: `docker compose` (v2 plugin) when it
 * answers, else `docker-compose` (v1, Debian 12's package).
 * @returns the executable to run (for v2, the `docker` binary), or null
 */
export function findCompose(): string | null {
  const docker = whichTool("docker");
  if (docker && Bun.spawnSync([docker, "compose", "version"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0) return docker;
  return whichTool("docker-compose");
}

/** Every tool the suites may ask for. Add a row when a suite needs a new one. */
export const TOOLS = {
  shellcheck: { packages: ["shellcheck"], for: "lint of scripts/ and .ci/run", find: bin("shellcheck") },
  nginx: { packages: ["nginx"], for: "nginx -t and a live nginx on 127.0.0.1", find: bin("nginx") },
  "systemd-analyze": { packages: ["systemd"], for: "systemd-analyze verify/security of the units", find: bin("systemd-analyze") },
  systemctl: { packages: ["systemd"], for: "systemctl --root enable of the units on a throwaway root (no systemd as init needed)", find: bin("systemctl") },
  sqlite3: { packages: ["sqlite3"], for: "backup.sh/restore.sh (.backup, integrity_check)", find: bin("sqlite3") },
  openssl: { packages: ["openssl"], for: "throwaway TLS certificates for nginx", find: bin("openssl") },
  curl: { packages: ["curl"], for: "install.sh health checks", find: bin("curl") },
  compose: { packages: ["docker-compose"], for: "docker-compose config on compose/*.yml (no engine)", find: findCompose },
  pdftoppm: { packages: ["poppler-utils"], for: "reference renders and page counts (pdftoppm, pdfinfo, pdftotext)", find: bin("pdftoppm") },
  convert: { packages: ["imagemagick"], for: "scans and images made at test time", find: () => (existsSync("/usr/bin/convert") ? "/usr/bin/convert" : whichTool("convert")) },
  postgres: { packages: ["postgresql"], for: "a throwaway PostgreSQL server for the PostgreSQL job store", find: findPostgres },
  tesseract: { packages: ["tesseract-ocr", "tesseract-ocr-rus", "tesseract-ocr-eng"], for: "OCR of scans (rus+eng)", find: findTesseract },
  restic: { packages: ["restic"], for: "off-box backups to a local-path restic repository", find: bin("restic") },
  qpdf: { packages: ["qpdf"], for: "PDF structure checks of written PDFs", find: bin("qpdf") },
  gs: { packages: ["ghostscript"], for: "reference renders of scans", find: bin("gs") },
  img2pdf: { packages: ["img2pdf"], for: "scans wrapped into PDFs at test time", find: bin("img2pdf") },
  tiff2pdf: { packages: ["libtiff-tools"], for: "CCITT G4 scans wrapped into PDFs at test time", find: bin("tiff2pdf") },
  opj_compress: { packages: ["libopenjp2-tools"], for: "JPEG 2000 scans made at test time", find: bin("opj_compress") },
  strace: { packages: ["strace"], for: "a real install traced for secrets written to disk", find: bin("strace") },
  prometheus: { packages: ["prometheus"], for: "promtool check of the shipped scrape config; a live Prometheus scrapes the bot and evaluates every dashboard query", find: bin("prometheus") },
  ip: { packages: ["iproute2"], for: "a network namespace where nginx listens on :443 (webhook suite)", find: bin("ip") },
  ss: { packages: ["iproute2"], for: "install.sh's check of the ports it needs", find: bin("ss") },
  unshare: { packages: ["util-linux"], for: "a mount namespace laid out like a unit's sandbox (ProtectSystem=strict, ReadWritePaths=)", find: bin("unshare") },
  script: { packages: ["bsdutils"], for: "a pseudo-terminal for the progress lines of long operator commands", find: bin("script") },
  setpriv: { packages: ["util-linux"], for: "running the bot as an unprivileged system user (local mode as it runs)", find: bin("setpriv") },
  useradd: { packages: ["passwd"], for: "system users of the local-mode permission model", find: bin("useradd") },
} as const satisfies Record<string, TestTool>;

/** A tool name of {@link TOOLS}. */
export type ToolName = keyof typeof TOOLS;

/**
 * Tools to treat as absent although installed: `DOCKET_TEST_HIDE_TOOLS=compose,shellcheck` (a
 * comma list, or `all`). It shows what a fresh machine without them gets, here.
 */
export function hiddenTools(): Set<string> {
  const v = process.env.DOCKET_TEST_HIDE_TOOLS ?? "";
  if (v.trim() === "all") return new Set(Object.keys(TOOLS));
  return new Set(v.split(",").map((s) => s.trim()).filter(Boolean));
}

/**
 * The path of `name` on this machine, or null when it is absent or hidden ({@link hiddenTools}).
 */
export function locateTool(name: ToolName): string | null {
  return hiddenTools().has(name) ? null : TOOLS[name].find();
}

/** The tools absent (or hidden) on this machine, in table order. */
export function missingTools(): ToolName[] {
  return (Object.keys(TOOLS) as ToolName[]).filter((t) => locateTool(t) === null);
}

/** Every Debian package of the table, deduplicated, in table order. */
export function allPackages(): string[] {
  return [...new Set(Object.values(TOOLS).flatMap((t) => t.packages))];
}

/** `bun scripts/test-tools.ts` prints the packages (one line, space-separated) for shell callers. */
if (import.meta.main) console.log(allPackages().join(" "));
