// README.md's headline block (between <!-- headline:begin --> and
// <!-- headline:end -->) is written by hand from bench/REPORT.md. This test
// checks that every figure in it is the report's: each paragraph and table
// row names the report sections its figures come from, and each decimal
// figure (and each count of 1,000 or more) must appear in one of them, as
// written. The date and start time must be the report's. Run by
// scripts/test.sh (node --test bench/); after a new report, update README's
// block until this passes.
//
//   node --test bench/reporting/readme_headline.test.mjs

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

const REPO = new URL("../../", import.meta.url);
const readme = readFileSync(new URL("README.md", REPO), "utf8");
const report = readFileSync(new URL("bench/REPORT.md", REPO), "utf8");

/** Where each part of the block takes its figures from: a test on the part's text, and report section headings (their start). */
const SOURCES = [
  [/^Measured in `bench\/REPORT.md`/, ["## Floors", "## Headline"]],
  [/^\| the real TypeScript 7\.0\.2 sync client/, ["## The real TypeScript client"]],
  [/^\| a C\+\+ client that blocks/, ["## A blocking client"]],
  [/^\| the C\+\+ shim at its defaults \(it spins\)/, ["## Headline", "## Echo against tsgo"]],
  [/^\| the C\+\+ shim at its defaults, against tsc/, ["## Echo against tsgo"]],
  [/^\| the Node binding through `--import`/, ["## spinrpc's Node.js binding"]],
  [/^\| the Node binding, typescript@7\.1/, ["## The same Node jobs against the 7.1 nightly"]],
  [/^\| the C\+\+ shim and the Node binding over shared memory/, ["## Shared memory against pipes"]],
  [/^\| the real async client/, ["## Async mode"]],
  [/^End to end, /, ["## Production-shaped workload"]],
  [/^Where spinrpc is not ahead/, ["## The real TypeScript client", "## A blocking client", "## spinrpc's Node.js binding", "## Production-shaped workload"]],
];
/** Figures in the block that are not this report's, and why. */
const NOT_FROM_REPORT = new Map([
  ["1.45", "the polled floor of the run before, for comparison"],
  ["7.1", "a TypeScript version"],
  ["0.6", "a target (issue 36)"],
  ["0.5", "a target (issue 36)"],
]);

const plain = (text) => text.replace(/(\d),(?=\d{3}\b)/g, "$1");
function section(heading) {
  const at = report.indexOf(`\n${heading}`);
  assert.ok(at >= 0, `bench/REPORT.md has no section "${heading}"`);
  const next = report.indexOf("\n## ", at + 1);
  return plain(report.slice(at, next < 0 ? undefined : next));
}
/** The block's paragraphs and table rows. */
function parts() {
  const m = readme.match(/<!-- headline:begin[^>]*-->\n([\s\S]*?)<!-- headline:end -->/);
  assert.ok(m, "README.md has no <!-- headline:begin --> ... <!-- headline:end --> block");
  return m[1].split(/\n\s*\n/).flatMap((p) => (p.startsWith("|") ? p.split("\n") : [p.replace(/\n/g, " ")])).filter((p) => p.trim());
}
/** Decimal figures and counts of 1,000 or more, versions and dates left out. */
function figures(text) {
  const t = plain(text).replace(/\d+\.\d+\.\d+(-[\w.]+)?/g, "").replace(/\d{4}-\d\d-\d\d( \d\d:\d\d(–\d\d:\d\d)?)?/g, "");
  return [...t.matchAll(/(?<![\d.])(\d+\.\d+|\d{4,})(?![\d.]*\d)/g)].map((x) => x[1]);
}

test("README's headline block was measured in bench/REPORT.md's run (date and start time)", () => {
  const generated = report.match(/^Generated (\d{4}-\d\d-\d\d)T(\d\d:\d\d)/m);
  assert.ok(generated, "bench/REPORT.md has no Generated line");
  const block = parts().join("\n");
  assert.ok(block.includes(`${generated[1]} ${generated[2]}`), `README's block does not name the report's run, ${generated[1]} ${generated[2]} UTC`);
});

test("every figure in README's headline block is in the report section it comes from", () => {
  const wrong = [];
  for (const part of parts()) {
    const found = figures(part);
    if (found.length === 0) continue;
    const source = SOURCES.find(([re]) => re.test(part));
    assert.ok(source, `README's headline block: no report section named for "${part.slice(0, 60)}…" (bench/reporting/readme_headline.test.mjs, SOURCES)`);
    const text = source[1].map(section).join("\n");
    for (const f of found) {
      if (NOT_FROM_REPORT.has(f)) continue;
      if (!new RegExp(`(?<![\\d.])${f.replace(".", "\\.")}(?![\\d]|\\.\\d)`).test(text)) wrong.push(`${f} in "${part.slice(0, 50)}…" (not in ${source[1].join(", ")})`);
    }
  }
  assert.deepEqual(wrong, [], `README's headline figures that bench/REPORT.md does not have:\n${wrong.join("\n")}`);
});
