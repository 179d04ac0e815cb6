// spinrpc's Node.js binding beside the pure-JS channel (bench/node/echo_latency.mjs,
// its `binding` part): the figures of docs/NODE.md's claims.

import { median } from "../../harness/stats.mjs";
import { count, ratio, secs, table, us } from "../format.mjs";

const ms = (ns) => (!Number.isFinite(ns) ? "–" : (ns / 1e6).toFixed(ns < 1e7 ? 3 : 1));

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, nodeRun }) {
  const b = nodeRun?.binding;
  if (!b) return;
  // The version's own server is "own" in the JSON and named by its
  // executable (tsc, tsgo) in rows; a table's variants are looked up by channel
  // ("pure-JS", "binding", "floor") and server ("spinrpc-server", "own").
  const label = nodeRun.servers.own.label;
  const name = (channel, server) => b.channels.find((c) => c.channel === channel && c.server === server)?.name;
  const PURE_OWN = name("pure-JS", "own");
  const PURE_SPINRPC = name("pure-JS", "spinrpc-server");
  const serverOf = Object.fromEntries(b.channels.map((c) => [c.name, c.server]));
  const v = (kind, server) => nodeRun.variants.find((x) => x.kind === kind && (server === undefined || x.server === server));
  const pure = v("own");
  // Each round ran every variant once: a's round r against b's round r,
  // the median of those ratios (docs/BENCHMARKING.md#alternation).
  const paired = (x, key) => median(x[key].map((a, r) => a / pure[key][r]));
  say("## spinrpc's Node.js binding (node/) beside the pure-JS channel", "");
  say("The binding's variants run in a child Node started with `node --import node/register.mjs`, the real API on top " +
    `(bench/node/job_child.mjs; ${nodeRun.ts.name} ${nodeRun.ts.version}, \`${nodeRun.ts.sync}\`); spinrpc-server and the binding use their default spin settings. ` +
    `\`${label}\` is the version's own server (the previous section names it). Below 1 = the binding faster.`, "");
  const rows = [];
  for (const server of ["spinrpc-server", "own"]) {
    const x = v("binding", server);
    if (!x || !pure) continue;
    rows.push([`${x.name} / pure-JS → ${label}`, ratio(paired(x, "round_mean_ns"), 1), ratio(paired(x, "round_p50_ns"), 1),
      ratio(paired(x, "round_p75_ns"), 1), x.round_p50_ns.map(us).join(", ")]);
  }
  say("Echo latency, the median of the per-round ratios of each round's mean, p50 and p75:", "");
  say(table(["echo latency", "mean", "p50", "p75", "binding p50 per round µs"], rows), "");
  if (b.sparse) {
    const o = b.options;
    const per1000 = (e) => (e.clientCpu * 1000) / e.n;
    const base = per1000(b.sparse[PURE_OWN]);
    say(`Sparse requests: ${count(o.sparse)} echoes per variant, one every ${o.sparseIntervalMs} ms, each variant in a fresh Node process.`, "");
    say(table(["variant", "echoes", "client CPU s / 1000", `minus ${PURE_OWN}`, "server CPU s / 1000", "per round"],
      Object.entries(b.sparse).map(([n, e]) => [n, count(e.n), secs(per1000(e)), secs(per1000(e) - base),
        secs((e.serverCpu * 1000) / e.n), e.roundClientPer1000.map(secs).join(", ")])), "");
  }
  if (b.spawn) {
    say(`Spawn to first reply (new API + one echo), ${b.options.spawn} per variant and round. The \`floor:\` rows are what starting ` +
      `each server executable costs here before its first reply: in a fresh Node process of the same kind, the binding starts ` +
      `\`spinrpc-server --version\` or \`${label} --version\` (each prints a line and exits) and close() reaps it, in the same rounds; ` +
      "each spawn is set against the floor of its own server (docs/NODE.md, \"Spawn to first reply\").", "");
    const same = { [name("binding", "spinrpc-server")]: PURE_SPINRPC, [name("binding", "own")]: PURE_OWN };
    const floorOf = (server) => b.spawn[name("floor", server)];
    say(table(["variant", "n", "median ms", "binding / pure-JS, same server", "/ its server's floor", "new API alone, median ms", "binding / pure-JS", "median per round ms"],
      Object.entries(b.spawn).map(([n, e]) => {
        const floor = serverOf[n] && !n.startsWith("floor:") ? floorOf(serverOf[n]) : null;
        return [n, count(e.ns.length), ms(median(e.ns)),
          same[n] ? ratio(median(e.ns), median(b.spawn[same[n]].ns)) : "",
          floor ? ratio(median(e.ns), median(floor.ns)) : "", ms(median(e.ctorNs)),
          same[n] ? ratio(median(e.ctorNs), median(b.spawn[same[n]].ctorNs)) : "", e.roundMedian.map(ms).join(", ")];
      })), "");
  }
  if (b.large) {
    say(`Large payloads: ${b.options.largeReps} timed echoes of each per variant and round after ${b.options.largeWarmup ?? 1} untimed, each variant in a fresh Node process (a long-lived one reuses the heap earlier big Buffers left; docs/NODE.md, "Large payloads") (median ms).`, "");
    const names = Object.keys(b.large);
    const keys = Object.keys(b.large[names[0]] ?? {});
    const bs = name("binding", "spinrpc-server");
    const bo = name("binding", "own");
    say(table(["payload", ...names, "binding / pure-JS → spinrpc-server", `binding / pure-JS → ${label}`],
      keys.map((k) => [k, ...names.map((n) => ms(median(b.large[n][k]))),
        ratio(median(b.large[bs][k]), median(b.large[PURE_SPINRPC][k])),
        ratio(median(b.large[bo][k]), median(b.large[PURE_OWN][k]))])), "");
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
