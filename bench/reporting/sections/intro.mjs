// The title, how to read the report, the machine and the variants.

import { table } from "../format.mjs";
import { machineRows } from "../machine.mjs";

/** Appends this section to the report through `say` (see bench/report.mjs). */
export default function section({ say, args, bench, rounds }) {
  // Workloads paired against tsgo or spin off run more rounds within the
  // plan's (bench/harness/bench_plan.h, BenchPlan::paired_rounds).
  const pairedRounds = Number(bench.context.spinrpc_paired_rounds) || rounds;
  say(`# spinrpc benchmark report${args.smoke ? " (SMOKE RUN: tiny counts, not a measurement)" : ""}`, "");
  say(`Generated ${bench.context.date} by \`${args.command || "(command not recorded)"}\`.`, "");
  say("Read the ratios, not the microseconds: the microseconds belong to this machine on this day " +
    "(docs/BENCHMARKING.md). Every figure pools all rounds of one workload and variant; the variants and the floors " +
    `ran side by side, alternating round by round (${rounds} round${rounds === 1 ? "" : "s"}, the variant order rotated each round). ` +
    (pairedRounds > rounds ? `The workloads whose figures are medians of per-round ratios against tsgo or spin off (echo against tsgo, ` +
      `the blocking client, the oversubscribed pairs) run ${pairedRounds} rounds, ${pairedRounds / rounds} in each of the run's rounds. ` : "") +
    "p50 and p75 are the figures to compare; p99 and max are tail, and on a shared VM mostly the VM's. " +
    "Raw data: spinrpc-bench's JSON and per-request latencies under `bench/out/` (not committed).", "");
  say("## Machine", "");
  say(table(["what", "value"], machineRows(args, bench), true), "");

  say("## Variants", "");
  say(table(["variant", "client shim", "spinrpc-server", "tsgo"], [
    ["off", "SyncRpcOptions::spin {spin_us 0}", "`--spin-us 0 --adaptive=0`", "no spin (tsgo has none)"],
    ["fixed", "{spin_us 100, adaptive false}", "`--spin-us 100 --adaptive=0`", "no spin"],
    ["adaptive", "{spin_us 100, adaptive true}", "`--spin-us 100 --adaptive=1`", "no spin"],
  ], true), "");
  say("Both ends of a spinrpc pair always run the same variant, checked at spawn through the shim's stats() and the server's " +
    "getChannelStats. tsgo has no spin: in the tsgo rows only the client shim's side varies. CPU seconds are user+system " +
    "over the timed loop only, summed over the rounds: the client's from CLOCK_PROCESS_CPUTIME_ID, the server's as the sum of " +
    "/proc/PID/task/*/schedstat's first field (ns, every thread). Every echo reply was compared with what was sent; a wrong byte " +
    "would have ended the run with status 3 and no report.", "");
}
