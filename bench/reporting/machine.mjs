// The machine a run was measured on, as the report's "Machine" table.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg, release, version as osVersion } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

function sh(cmd, argv) {
  try { return execFileSync(cmd, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim(); } catch { return ""; }
}
function readText(path) {
  try { return readFileSync(path, "utf8").trim(); } catch { return ""; }
}

/** Rows of the Machine table for a run of `bench` (Google Benchmark JSON) built in args.buildDir. */
export function machineRows(args, bench) {
  const cpuinfo = readText("/proc/cpuinfo");
  const cpuModel = (cpuinfo.match(/^model name\s*:\s*(.*)$/m) || [])[1] || cpus()[0]?.model || "unknown";
  const hypervisor = /^flags\s*:.*\bhypervisor\b/m.test(cpuinfo);
  const online = readText("/sys/devices/system/cpu/online");
  const idleDriver = readText("/sys/devices/system/cpu/cpuidle/current_driver") || "none";
  const idleStates = [];
  for (let i = 0; i < 16; i++) {
    const dir = `/sys/devices/system/cpu/cpu0/cpuidle/state${i}`;
    if (!existsSync(dir)) break;
    idleStates.push(`${readText(`${dir}/name`)} (exit ${readText(`${dir}/latency`)} µs${readText(`${dir}/disable`) === "1" ? ", disabled" : ""})`);
  }
  // The boot parameters that change how wake-ups are placed and what an
  // idle CPU or a fresh page costs: two machines of one kind differ here
  // (e.g. sched_vcpu_pack, page_reporting.page_reporting_order).
  const bootParams = readText("/proc/cmdline").split(/\s+/)
    .filter((t) => /^(sched|page_reporting|isolcpus|nohz|idle|cpuidle|intel_idle|processor|mitigations|haltpoll)/.test(t));
  const buildType = args.buildDir ? ((readText(join(args.buildDir, "CMakeCache.txt")).match(/^CMAKE_BUILD_TYPE:STRING=(.*)$/m) || [])[1] || "?") : "?";
  const compiler = args.buildDir ? ((readText(join(args.buildDir, "CMakeCache.txt")).match(/^CMAKE_CXX_COMPILER:(?:FILEPATH|STRING)=(.*)$/m) || [])[1] || "") : "";
  const compilerVersion = compiler ? sh(compiler, ["--version"]).split("\n")[0] : "";
  const repo = resolve(dirname(new URL(import.meta.url).pathname), "../..");
  const commit = sh("git", ["-C", repo, "describe", "--always", "--dirty", "--abbrev=12"]);
  // Paths as the repository names them, so the report reads the same on
  // every clone (a build outside the repository shows as ../...).
  const inRepo = (path) => (path ? relative(repo, resolve(path)) : path);
  return [
    ["CPU", `${cpuModel}${hypervisor ? " (virtual machine: hypervisor flag set)" : ""}`],
    ["cores", `${cpus().length} online (${online || "?"}); Google Benchmark saw ${bench.context.num_cpus} at ${bench.context.mhz_per_cpu} MHz`],
    ["kernel", `Linux ${release()} (${osVersion()})`],
    ["CPU idle", `driver ${idleDriver}; cpu0 states: ${idleStates.join(", ") || "none listed"}`],
    ["boot parameters (scheduling, idle, memory)", bootParams.map((t) => `\`${t}\``).join(" ") || "none of these set"],
    ["load average at start", (bench.context.load_avg || []).map((x) => x.toFixed(2)).join(", ") || "?"],
    ["load average at report", loadavg().map((x) => x.toFixed(2)).join(", ")],
    ["build", `${buildType}${compilerVersion ? `, ${compilerVersion}` : ""}; libbenchmark built as ${bench.context.library_build_type} (it only runs the loop; every time here is taken with steady_clock around the request)`],
    ["source", commit || "?"],
    ["peers", `spinrpc-server's code with benchWork added \`${inRepo(bench.context.spinrpc_server)}\`; tsgo \`${inRepo(bench.context.spinrpc_tsgo) || "not installed: no tsgo rows"}\``],
  ];
}
