// CPU time of processes, for the node benchmark scripts (echo_latency.mjs,
// bench/workload/*.mjs).
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

let CLK_TCK = 100;
try { CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100; } catch { /* keep 100 */ }

/**
 * CPU seconds a live process has used: the sum over its threads of the first
 * field of /proc/PID/task/TID/schedstat (ns on CPU; exact for multi-threaded
 * tsgo, as spinrpc-bench measures it), else utime+stime from /proc/PID/stat
 * in clock ticks. NaN once the process is gone.
 */
export function procCpuSeconds(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try { ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]); } catch { /* thread gone */ }
    }
    return ns / 1e9;
  } catch { /* no schedstat: fall back to ticks */ }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / CLK_TCK; // utime, stime (fields 14, 15)
  } catch {
    return NaN;
  }
}

/** CPU seconds this process has used (user + system). */
export const selfCpuSeconds = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

/**
 * The pid of this process's only child (over all its threads'
 * /proc/self/task/TID/children), or undefined if it has none or several:
 * the server a channel spawned when the channel does not say (the binding).
 */
export function onlyChildPid() {
  const pids = readdirSync("/proc/self/task").flatMap((t) => readFileSync(`/proc/self/task/${t}/children`, "utf8").trim().split(" ").filter(Boolean));
  return pids.length === 1 ? Number(pids[0]) : undefined;
}
