/**
 * One docket PDF tool in a fresh process, for bench/processors/pdftools.ts (timed under GNU time like the
 * CLI peers): `bun bench/processors/pdftool-one.ts <variant|merge> <workDir> <input> [more inputs…]`.
 * `merge` runs the parts processor (an album of PDFs); anything else is a job variant
 * (processors/pdftools/action.ts), run through processFile as the pool child runs it.
 */
import { processFile } from "../../processors/process-file.ts";

const [action, workDir, ...inputs] = process.argv.slice(2);
const limits = { maxInputPixels: 100_000_000, maxOutputSide: 2560, maxPdfPages: 5000, pdfPageBudgetMs: 60_000 };
const options =
  action === "merge"
    ? { workDir: workDir!, ...limits, parts: inputs.map((path, i) => ({ path, name: null, n: i + 1 })) }
    : { workDir: workDir!, ...limits, action: action!, declaredName: "bench.pdf" };
const r = await processFile(inputs[0]!, options);
console.log(JSON.stringify({ outputs: r.outputs.map((o) => o.size), facts: r.facts }));
