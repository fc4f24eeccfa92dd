/**
 * vitest global setup (runs once per `vitest run`, in the main process): hands the test workers a
 * checkout root that an unprivileged user can read (test/support/unprivileged.ts) and removes the
 * bind mount it may have made when the run ends.
 */
import { makeReachableRoot, REACHABLE_ROOT_ENV, removeReachableRoot } from "./unprivileged";

/** vitest globalSetup entry: returns the teardown. */
export default function setup(): () => void {
  const { root, mount } = makeReachableRoot();
  process.env[REACHABLE_ROOT_ENV] = root ?? "";
  return () => {
    if (mount) removeReachableRoot(mount);
  };
}
