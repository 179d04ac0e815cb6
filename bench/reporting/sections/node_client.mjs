// The real TypeScript client (bench/node/echo_latency.mjs).

import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { count, ratio, secs, table, us } from "../format.mjs";

const REPO = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, nodeRun }) {
  if (nodeRun) {
    say("## The real TypeScript client (bench/node/echo_latency.mjs)", "");
    const o = nodeRun.options;
    // The version's own server (kind "own"), named by its executable (tsc, tsgo).
    const own = nodeRun.servers.own;
    const label = own.label;
    say(`${nodeRun.client}; ${o.size}-byte echoes, ${count(o.count)} per variant over ${o.rounds} rounds (each round spawns every variant once, ` +
      `order rotating), ${o.warmup} warm-up echoes per process. The JavaScript client does not spin: only spinrpc-server's side varies ` +
      "(set through TSGO_SYNC_SPIN_* in its environment, checked with getChannelStats). Its floors are Node's own: the same message size " +
      "through `cat` over two pipes, blocking and polled.", "");
    say(`Servers: ${nodeRun.servers.spinrpc.version_line}; \`${label}\`: ` +
      (own.overridden ? `\`${relative(REPO, own.path)}\` (SPINRPC_TSGO)` : `${nodeRun.ts.name} ${nodeRun.ts.version}'s own server`) +
      `, \`${label} --version\`: ${own.version_line}` +
      (own.mismatch ? ` — not the client's own server (the client is ${nodeRun.ts.name} ${nodeRun.ts.version})` : "") + ".", "");
    const fb = nodeRun.variants.find((v) => v.floor === "blocking");
    const fp = nodeRun.variants.find((v) => v.floor === "polled");
    const ts = nodeRun.variants.find((v) => v.kind === "own");
    const off = nodeRun.variants.find((v) => v.kind === "spinrpc" && v.spin === "off");
    const rows = nodeRun.variants.map((v) => [v.name, count(v.n), us(v.mean_ns), us(v.p50_ns), us(v.p75_ns), us(v.p99_ns), us(v.max_ns),
      ratio(v.p50_ns, fb?.p50_ns), ratio(v.p50_ns, fp?.p50_ns), v.kind === "spinrpc" && v.spin !== "off" ? ratio(v.p50_ns, off?.p50_ns) : "",
      v.kind === "spinrpc" || v.kind === "binding" ? ratio(v.p50_ns, ts?.p50_ns) : "", v.kind === "spinrpc" || v.kind === "binding" ? ratio(v.p75_ns, ts?.p75_ns) : "",
      secs(v.client_cpu_s), secs(v.server_cpu_s), secs(v.wall_s), v.round_p50_ns.map(us).join(", ")]);
    say(table(["variant", "n", "mean µs", "p50 µs", "p75 µs", "p99 µs", "max µs", "p50 / floor blocking", "p50 / floor polled", "p50 / server spin off",
      `/ ${label} p50`, `/ ${label} p75`, "client CPU s", "server CPU s", "wall s", "p50 per round µs"], rows), "");
    // The rounds ran side by side: each variant's round r against the own
    // server's round r (docs/BENCHMARKING.md#alternation).
    const pairedRows = nodeRun.variants.filter((v) => v.paired_vs_own).map((v) => {
      const p = v.paired_vs_own;
      return [v.name, ratio(p.p50, 1), ratio(p.p75, 1), us(p.worst_p50_ns), us(p.own_worst_p50_ns), ratio(p.server_cpu, 1)];
    });
    if (pairedRows.length > 0) {
      say(`Against ${label} round by round (median of the per-round ratios; below 1 = spinrpc-server faster or cheaper):`, "");
      say(table(["variant", `p50 / ${label}`, `p75 / ${label}`, "worst round p50 µs", `${label}'s worst round p50 µs`, `server CPU per echo / ${label}`], pairedRows), "");
    }
  }
}
