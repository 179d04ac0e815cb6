// The report's pictures, all drawn with gnuplot (gnuplot-nox,
// scripts/setup.sh): the CDFs and the report's "Pictures" section, the
// trace timeline (bench/harness/trace_figures.mjs), and the one runner every
// picture of bench/ goes through (bench/workload/report.mjs's too).

import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

import { VARIANTS } from "./run.mjs";
import { percentile } from "../harness/stats.mjs";

/**
 * Runs gnuplot on `script`; true when it drew. On failure (gnuplot missing
 * or refusing the script) says so on stderr as `who` and returns false, so
 * that a report without gnuplot is written without its pictures.
 */
export function gnuplot(script, who) {
  const r = spawnSync("gnuplot", [], { input: script, encoding: "utf8" });
  if (r.error || r.status !== 0) {
    console.error(`${who}: gnuplot failed: ${r.error ? r.error.message : r.stderr}`);
    return false;
  }
  return true;
}

/** Tick marks 1, 1.5, 2, 3, 5, 7 per decade between lo and hi (log axis). */
function logTicks(lo, hi) {
  const ticks = [];
  for (let d = 10 ** Math.floor(Math.log10(lo)); d <= hi; d *= 10) {
    for (const m of [1, 1.5, 2, 3, 5, 7]) {
      const t = Number((m * d).toPrecision(3));
      if (t >= lo && t <= hi) ticks.push(t);
    }
  }
  return ticks;
}

/**
 * Writes `series` ({title, sorted, style, reference}) as a CDF and plots it;
 * returns the PNG path or null. The x axis ends at the largest p99.5 of the
 * series that are not `reference` (a floor's stalls must not squash the rest).
 * The data file goes next to the benchmark JSON, not into the report.
 */
function cdf(args, file, title, series) {
  series = series.filter((s) => s.sorted && s.sorted.length > 0);
  if (series.length === 0) return null;
  mkdirSync(args.pngDir, { recursive: true });
  const dat = join(dirname(resolve(args.benchJson)), `${file}.dat`);
  const png = join(args.pngDir, `${file}.png`);
  const blocks = [];
  let xmin = Infinity;
  let xmax = 0;
  for (const s of series) {
    const n = s.sorted.length;
    const pts = [];
    const steps = Math.min(n, 2000);
    for (let k = 0; k < steps; k++) {
      const q = (k + 1) / steps;
      pts.push(`${(percentile(s.sorted, q) / 1000).toFixed(4)} ${q.toFixed(5)}`);
    }
    xmin = Math.min(xmin, s.sorted[0] / 1000);
    if (!s.reference) xmax = Math.max(xmax, percentile(s.sorted, 0.995) / 1000);
    blocks.push(pts.join("\n"));
  }
  writeFileSync(dat, blocks.join("\n\n\n") + "\n");
  const lo = Number((xmin * 0.9).toPrecision(2));
  const hi = Number((xmax * 1.1).toPrecision(2));
  const plots = series.map((s, i) => `'${dat}' index ${i} with lines ${s.style} title '${s.title.replace(/'/g, "''")} (n=${s.sorted.length})'`);
  const script = [
    "set terminal pngcairo size 1000,620 font 'sans,10'",
    `set output '${png}'`,
    `set title '${title.replace(/'/g, "''")}'`,
    "set logscale x",
    `set xrange [${lo}:${hi}]`,
    `set xtics (${logTicks(lo, hi).join(", ")})`,
    "set yrange [0:1]",
    "set xlabel 'round-trip latency, µs (log scale, cut at the largest p99.5)'",
    "set ylabel 'fraction of requests at or below'",
    "set grid",
    "set key right bottom",
    `plot ${plots.join(", \\\n     ")}`,
  ].join("\n");
  return gnuplot(script, `report (${file})`) ? png : null;
}


/**
 * Draws the pictures of run `r` into args.pngDir and appends the section
 * that shows them; returns how many were drawn.
 */
export function pictures(args, { say, bench, find, floorOf, echoOf, tsgoOf }) {
  const STYLE = { off: "lw 2 lc rgb '#1f77b4'", fixed: "lw 2 lc rgb '#d62728'", adaptive: "lw 2 lc rgb '#2ca02c'" };
  const drawn = [];
  {
    const s = VARIANTS.map((v) => ({ title: `spinrpc-server, ${v}`, sorted: echoOf(8, v)?.sorted, style: STYLE[v] }));
    s.push({ title: "tsgo, shim off", sorted: tsgoOf(8, "off")?.sorted, style: "lw 1 dt 4 lc rgb '#9467bd'", reference: true });
    s.push({ title: "floor, blocking read", sorted: floorOf(8, "blocking")?.sorted, style: "lw 1 dt 2 lc rgb 'black'", reference: true });
    s.push({ title: "floor, polled read", sorted: floorOf(8, "polled")?.sorted, style: "lw 1 dt 3 lc rgb 'gray40'", reference: true });
    s.push({ title: "floor, shared memory", sorted: floorOf(8, "shm")?.sorted, style: "lw 1 dt 5 lc rgb 'gray60'", reference: true });
    const png = cdf(args, "small_echo_cdf", "8-byte echo through the client shim: latency CDF per variant", s);
    if (png) drawn.push(["Small echo (8 B), back to back, per variant, with the floors", png]);
  }
  {
    const s = [];
    for (const [large, dt] of [["echo1MiB", 1], ["busy200us", 2]]) {
      for (const v of VARIANTS) s.push({ title: `after ${large}, ${v}`, sorted: find("BM_Interleave", { large, variant: v })?.sorted, style: `${STYLE[v]} dt ${dt}` });
    }
    const png = cdf(args, "interleave_cdf", "Interleave: the 8-byte echoes between large requests, per variant", s);
    if (png) drawn.push(["Interleave: small echoes after a 1 MiB echo (solid) or a 200 µs server turn (dashed)", png]);
  }
  {
    const s = [];
    for (const [pairs, dt] of [[2, 1], [4, 2]]) {
      for (const v of VARIANTS) s.push({ title: `${pairs} pairs, ${v}`, sorted: find("BM_Oversubscribed", { pairs, variant: v })?.sorted, style: `${STYLE[v]} dt ${dt}` });
    }
    const png = cdf(args, "oversubscribed_cdf", `Oversubscribed: 8-byte echoes with 2 and 4 pairs on ${bench.context.num_cpus} CPUs`, s);
    if (png) drawn.push(["Oversubscribed: 2 pairs (solid) and 4 pairs (dashed)", png]);
  }
  say("## Pictures", "");
  if (drawn.length === 0) {
    say("No pictures: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox).", "");
  } else {
    for (const [caption, png] of drawn) say(`![${caption}](${relative(dirname(resolve(args.out)), resolve(png))})`, "", `*${caption}.*`, "");
  }
  return drawn.length;
}

/**
 * Draws a timeline into `png`: horizontal lanes (`lanes`, top first, each a
 * y tick label) of boxes `{ lane, from, to, kind }` (x in µs), one colour per
 * kind (`kinds`: { kind: { title, colour, height } }, legend order; height
 * is the box's share of its lane, so a thin box can stand behind thick
 * ones), in stacked panels (`panels`: [{ title, from, to }], x ranges in
 * µs). The boxes of each kind are drawn in `kinds` order, later on top. The
 * data file `dat` keeps the boxes beside the run's raw output. Returns the
 * PNG path or null.
 */
export function timeline(png, dat, { title, lanes, kinds, boxes, panels, xlabel }) {
  const kindNames = Object.keys(kinds).filter((k) => boxes.some((b) => b.kind === k));
  if (kindNames.length === 0) return null;
  mkdirSync(dirname(resolve(png)), { recursive: true });
  mkdirSync(dirname(resolve(dat)), { recursive: true });
  const laneY = new Map(lanes.map((name, i) => [name, lanes.length - i]));
  writeFileSync(dat, kindNames.map((k) => boxes.filter((b) => b.kind === k)
    .map((b) => `${b.from.toFixed(3)} ${b.to.toFixed(3)} ${laneY.get(b.lane)}`).join("\n") || "0 0 -10").join("\n\n\n") + "\n");
  const quote = (s) => s.replace(/'/g, "''");
  const plots = kindNames.map((k, i) => {
    const h = (kinds[k].height ?? 0.7) / 2;
    return `'${dat}' index ${i} using (($1+$2)/2):3:1:2:($3-${h}):($3+${h}) with boxxyerror fs solid 1.0 noborder ` +
      `lc rgb '${kinds[k].colour}' title '${quote(kinds[k].title)}'`;
  });
  const script = [
    `set terminal pngcairo size 1400,${120 + 260 * panels.length} font 'sans,10'`,
    `set output '${png}'`,
    `set multiplot layout ${panels.length},1 title '${quote(title)}' noenhanced`,
    `set yrange [0.4:${lanes.length + 0.6}]`,
    `set ytics (${lanes.map((name) => `'${quote(name)}' ${laneY.get(name)}`).join(", ")})`,
    "set grid xtics",
    `set xlabel '${quote(xlabel)}' noenhanced`,
    `set lmargin ${Math.max(...lanes.map((name) => name.length)) + 3}`,
    "set rmargin 4",
  ];
  // One legend, under the last panel.
  panels.forEach((p, i) => {
    script.push(i === panels.length - 1 ? "set key outside below center horizontal maxcols 4 noenhanced" : "unset key",
      `set title '${quote(p.title)}' noenhanced`, `set xrange [${p.from}:${p.to}]`, `plot ${plots.join(", \\\n     ")}`);
  });
  script.push("unset multiplot");
  return gnuplot(script.join("\n"), `timeline (${png})`) ? png : null;
}
