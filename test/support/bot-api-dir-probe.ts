/**
 * Child-process probe for the `botApiDir` readiness check (bot/ops/bot-api-dir-check.ts): runs it on
 * one directory as whatever user the parent started it as (e.g. `setpriv --reuid=65534`) and prints
 * its verdict `{ ok, detail }` as JSON. Args: <dir>.
 */
import { botApiDirCheck } from "../../bot/ops/bot-api-dir-check.ts";

const [dir] = process.argv.slice(2) as [string];
console.log(JSON.stringify(await botApiDirCheck(dir).run(new AbortController().signal)));
