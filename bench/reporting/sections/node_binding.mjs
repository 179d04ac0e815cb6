// spinrpc's Node.js binding beside the pure-JS channel (bench/node/echo_latency.mjs,
// its `binding` part): the five figures of docs/NODE.md's claims.

import { count, median, ratio, secs, table, us } from "../format.mjs";

const ms = (ns) => (!Number.isFinite(ns) ? "–" : (ns / 1e6).toFixed(ns < 1e7 ? 3 : 1));

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, nodeRun }) {
  const b = nodeRun?.binding;
  if (!b) return;
  const v = (name) => nodeRun.variants.find((x) => x.name === name);
  const pure = v("tsgo");
  say("## spinrpc's Node.js binding (node/) beside the pure-JS channel", "");
  say("The binding's variants run in a child Node started with `node --import node/register.mjs`, the real API on top " +
    "(bench/node/job_child.mjs); spinrpc-server and the binding use their default spin settings. Ratios of medians over the " +
    "rounds; below 1 = the binding faster.", "");
  const rows = [];
  for (const name of ["binding → spinrpc-server", "binding → tsgo"]) {
    const x = v(name);
    if (!x || !pure) continue;
    rows.push([`${name} / pure-JS → tsgo`, ratio(median(x.round_p50_ns), median(pure.round_p50_ns)),
      ratio(median(x.round_p75_ns), median(pure.round_p75_ns)), x.round_p50_ns.map(us).join(", ")]);
  }
  say(table(["echo latency", "median p50", "median p75", "binding p50 per round µs"], rows), "");
  if (b.sparse) {
    const o = b.options;
    const per1000 = (e) => (e.clientCpu * 1000) / e.n;
    const base = per1000(b.sparse["pure-JS → tsgo"]);
    say(`Sparse requests: ${count(o.sparse)} echoes per variant, one every ${o.sparseIntervalMs} ms, each variant in a fresh Node process.`, "");
    say(table(["variant", "echoes", "client CPU s / 1000", "minus pure-JS → tsgo", "server CPU s / 1000", "per round"],
      Object.entries(b.sparse).map(([name, e]) => [name, count(e.n), secs(per1000(e)), secs(per1000(e) - base),
        secs((e.serverCpu * 1000) / e.n), e.roundClientPer1000.map(secs).join(", ")])), "");
  }
  if (b.spawn) {
    say(`Spawn to first reply (new API + one echo), ${b.options.spawn} per variant and round. The \`floor:\` row is what any ` +
      "process costs here before its first reply: in a fresh Node process of the same kind, the binding starts " +
      "`spinrpc-server --version` (it prints a line and exits) and close() reaps it (docs/NODE.md, \"Spawn to first reply\").", "");
    const same = { "binding → spinrpc-server": "pure-JS → spinrpc-server", "binding → tsgo": "pure-JS → tsgo" };
    const floor = Object.entries(b.spawn).find(([name]) => name.startsWith("floor:"))?.[1];
    say(table(["variant", "n", "median ms", "binding / pure-JS, same server", "/ floor", "new API alone, median ms", "binding / pure-JS", "median per round ms"],
      Object.entries(b.spawn).map(([name, e]) => [name, count(e.ns.length), ms(median(e.ns)),
        same[name] ? ratio(median(e.ns), median(b.spawn[same[name]].ns)) : "",
        floor && e !== floor ? ratio(median(e.ns), median(floor.ns)) : "", ms(median(e.ctorNs)),
        same[name] ? ratio(median(e.ctorNs), median(b.spawn[same[name]].ctorNs)) : "", e.roundMedian.map(ms).join(", ")])), "");
  }
  if (b.large) {
    say(`Large payloads: ${b.options.largeReps} timed echoes of each per variant and round after ${b.options.largeWarmup ?? 1} untimed, each variant in a fresh Node process (a long-lived one reuses the heap earlier big Buffers left; docs/NODE.md, "Large payloads") (median ms).`, "");
    const names = Object.keys(b.large);
    const keys = Object.keys(b.large[names[0]] ?? {});
    say(table(["payload", ...names, "binding / pure-JS → spinrpc-server", "binding / pure-JS → tsgo"],
      keys.map((k) => [k, ...names.map((n) => ms(median(b.large[n][k]))),
        ratio(median(b.large["binding → spinrpc-server"][k]), median(b.large["pure-JS → spinrpc-server"][k])),
        ratio(median(b.large["binding → tsgo"][k]), median(b.large["pure-JS → tsgo"][k]))])), "");
    const f = b.figures?.largeFaults;
    if (f) {
      say(`The same echoes by the minor page faults each took in its process (\`process.resourceUsage()\` around it): ` +
        `how many of them took fewer than 1/${f.divisor} of the payload's 4 KiB pages (found the reply's memory in place; a fresh 16 MiB Buffer is 4,096 faults), ` +
        `those echoes' median ms, and the median faults of all. Which echoes land on fresh memory is the garbage collector's ` +
        `and glibc's doing (docs/NODE.md, "Large payloads").`, "");
      say(table(["payload", ...names.map((n) => `${n}: fault-free, ms, faults`)],
        Object.entries(f.cells).map(([k, cells]) => [k, ...names.map((n) =>
          `${cells[n].n} of ${cells[n].of}, ${ms(cells[n].nsFew ?? NaN)}, ${count(cells[n].faultsMedian)}`)])), "");
    }
  }
}
