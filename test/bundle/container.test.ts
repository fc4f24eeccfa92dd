/**
 * scripts/container.sh, the helper of docket-bot-api.service and docket-nginx.service (issue 9
 * item 8), against recording stubs of `docker` and the compose client. The stubs answer from a
 * state directory the test writes: `id` (what `compose ps -q` prints), `inspect` (one line per
 * `docker inspect`, consumed in order; the last line repeats) and `health` (the last health
 * probe's output). Every call is appended to `calls.log`.
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCmdAsync, testTempDir, writeExecutable } from "./helpers";

/** A state directory with the two stubs; returns its paths and a way to run container.sh. */
function stubs(initial: { id: string; inspect: string[]; health?: string; nginxTest?: number }) {
  const dir = testTempDir("container");
  const log = join(dir, "calls.log");
  writeFileSync(join(dir, "id"), initial.id);
  writeFileSync(join(dir, "inspect"), initial.inspect.join("\n") + "\n");
  writeFileSync(join(dir, "health"), initial.health ?? "");
  writeFileSync(join(dir, "nginx-t"), String(initial.nginxTest ?? 0));
  // docker inspect: the health log, or the next state line (the last one repeats).
  writeExecutable(join(dir, "docker"), `#!/bin/bash
printf 'docker %s\\n' "$*" >> '${log}'
case "$1" in
  inspect)
    case "$3" in *Health.Log*) cat '${dir}/health'; exit 0 ;; esac
    [ "$4" = "$(cat '${dir}/id')" ] || { echo "Error: No such object: $4" >&2; exit 1; }
    line="$(head -n1 '${dir}/inspect')"
    if [ "$(wc -l < '${dir}/inspect')" -gt 1 ]; then sed -i 1d '${dir}/inspect'; fi
    printf '%s\\n' "$line" ;;
  exec)
    if [ "$3 $4" = "nginx -t" ]; then echo "nginx: [emerg] cannot load certificate" >&2; exit "$(cat '${dir}/nginx-t')"; fi ;;
esac
`);
  writeExecutable(join(dir, "compose"), `#!/bin/bash
printf 'compose %s\\n' "$*" >> '${log}'
case "$*" in *" ps -q "*) cat '${dir}/id'; echo ;; esac
`);
  const run = (action: string, service: string, env: Record<string, string> = {}) =>
    runCmdAsync(["bash", "scripts/container.sh", action, service], {
      env: { DOCKER: join(dir, "docker"), DOCKER_COMPOSE: join(dir, "compose"), CONTAINER_POLL: "0", ...env },
      timeoutMs: 30_000,
    });
  const calls = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []);
  const setInspect = (lines: string[]) => writeFileSync(join(dir, "inspect"), lines.join("\n") + "\n");
  return { dir, run, calls, setInspect, setId: (id: string) => writeFileSync(join(dir, "id"), id), appendInspect: (l: string) => appendFileSync(join(dir, "inspect"), l + "\n") };
}

const T0 = "2026-12-01T10:00:00.000Z";
const T1 = "2026-12-01T10:05:00.000Z";

describe("container.sh start: up, then wait for docker's health verdict", () => {
  it("brings the service up with its own compose file and returns once it is healthy", async () => {
    const s = stubs({ id: "c1", inspect: [`running starting ${T0} 0 0 false`, `running starting ${T0} 0 0 false`, `running healthy ${T0} 0 0 false`] });
    const r = await s.run("start", "bot-api");
    expect(r.stderr).toContain("docket-bot-api.service: container bot-api is running (healthy)");
    expect(r.status).toBe(0);
    const calls = s.calls();
    expect(calls[0]).toMatch(/^compose -p docket -f \S+\/compose\/docker-compose\.yml --env-file \/etc\/docket\/compose\.env up -d --no-build bot-api$/);
    expect(calls.filter((c) => c.startsWith("docker inspect")).length).toBe(3);
  });

  it("nginx uses compose/webhook.yml alone", async () => {
    const s = stubs({ id: "n1", inspect: [`running healthy ${T0} 0 0 false`] });
    expect((await s.run("start", "nginx")).status).toBe(0);
    expect(s.calls()[0]).toMatch(/ -f \S+\/compose\/webhook\.yml --env-file .* up -d --no-build nginx$/);
  });

  it("fails with one line naming the state and the last health output when it never turns healthy", async () => {
    const s = stubs({ id: "c1", inspect: [`running unhealthy ${T0} 0 0 false`], health: "wget: can't connect to remote host (127.0.0.1): Connection refused" });
    const r = await s.run("start", "bot-api", { CONTAINER_START_TIMEOUT: "0" });
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      "docket-bot-api.service: container bot-api not healthy within 0s (state running/unhealthy; last health check: wget: can't connect to remote host (127.0.0.1): Connection refused); logs: journalctl CONTAINER_TAG=docket-bot-api",
    );
  });

  it("fails at once when the container exits right after start, and names a memory kill", async () => {
    const s = stubs({ id: "c1", inspect: [`exited none ${T0} 0 137 true`] });
    const r = await s.run("start", "bot-api");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("container bot-api exited right after start (exit code 137, killed for memory: raise its limit, docs/sizing.md)");
  });
});

describe("container.sh watch: the unit fails when the container does", () => {
  it.each([
    ["stops", [`running healthy ${T0} 0 0 false`, `running healthy ${T0} 0 0 false`, `exited healthy ${T0} 0 1 false`], "container bot-api is exited (exit code 1); systemd restarts it; logs: journalctl CONTAINER_TAG=docket-bot-api"],
    ["is restarted by docker after a crash", [`running healthy ${T0} 0 0 false`, `running starting ${T1} 1 137 true`], "container bot-api crashed and docker restarted it (restart count 1, last exit code 137, killed for memory: raise its limit, docs/sizing.md); systemd restarts the unit"],
    ["turns unhealthy", [`running healthy ${T0} 0 0 false`, `running unhealthy ${T0} 0 0 false`], "container bot-api is unhealthy (last health check: timeout); systemd restarts it"],
  ])("exits 1 when it %s", async (_what, inspect, line) => {
    const s = stubs({ id: "c1", inspect, health: "timeout" });
    const r = await s.run("watch", "bot-api");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`docket-bot-api.service: ${line}`);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("exits 1 when the container was replaced behind its back", async () => {
    const s = stubs({ id: "c1", inspect: [`running healthy ${T0} 0 0 false`] });
    // `compose ps -q` answers c1 first, then c2 (someone ran compose up by hand in between).
    const seen = join(s.dir, "ps-count");
    writeFileSync(join(s.dir, "compose"), readFileSync(join(s.dir, "compose"), "utf8").replace(`cat '${s.dir}/id'; echo ;;`, `if [ -e '${seen}' ]; then echo c2; else touch '${seen}'; echo c1; fi ;;`));
    const r = await s.run("watch", "bot-api");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("the container of bot-api was replaced outside this unit");
  });

  it("exits 1 at once when there is no container", async () => {
    const s = stubs({ id: "", inspect: [`running healthy ${T0} 0 0 false`] });
    const r = await s.run("watch", "nginx");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("docket-nginx.service: no container for nginx");
  });
});

describe("container.sh stop and reload", () => {
  it("stop is compose stop of the one service", async () => {
    const s = stubs({ id: "c1", inspect: [`running healthy ${T0} 0 0 false`] });
    expect((await s.run("stop", "bot-api")).status).toBe(0);
    expect(s.calls()).toEqual([expect.stringMatching(/^compose -p docket -f \S+docker-compose\.yml --env-file \S+ stop bot-api$/)]);
  });

  it("reload tests the new configuration first and keeps the old one when it is invalid", async () => {
    const bad = stubs({ id: "n1", inspect: [`running healthy ${T0} 0 0 false`], nginxTest: 1 });
    const r = await bad.run("reload", "nginx");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("docket-nginx.service: the new nginx configuration is invalid, nginx keeps serving the old one: nginx: [emerg] cannot load certificate");
    expect(bad.calls()).not.toContain("docker exec n1 nginx -s reload");
    const good = stubs({ id: "n1", inspect: [`running healthy ${T0} 0 0 false`] });
    const ok = await good.run("reload", "nginx");
    expect(ok.status).toBe(0);
    expect(good.calls().filter((c) => c.startsWith("docker exec"))).toEqual(["docker exec n1 nginx -t", "docker exec n1 nginx -s reload"]);
  });

  it("refuses an unknown service or action with exit 2", async () => {
    const s = stubs({ id: "c1", inspect: [] });
    expect((await s.run("start", "postgres")).status).toBe(2);
    expect((await s.run("explode", "nginx")).status).toBe(2);
  });
});
