// The Node binding starts its server as Node's child_process.spawn does on
// Linux, which the TypeScript 7 channel uses (docs/HARDENING.md, "Starting a
// child as Node does"). Each test runs the same program through both and
// compares what happened: which program ran, with which argv, from which
// PATH entry, or the error and its properties; the child's signal
// dispositions, mask, descriptors and environment. The program is a probe
// script that writes what it sees to the file named by PROBE_OUT and exits.
//
// The binding runs each case twice: as it is, offering shared memory
// (docs/SHARED-MEMORY.md), where its child gets exactly two things more than
// Node's, fd 3 a memfd named spinrpc-ring and SPINRPC_SHM=fd:3,parent:… in its
// environment; and with sharedMemory: false, where it gets what Node's does.
// Both ways it also gets the environment entries it always adds
// (SPINRPC_LEND_REPLIES=1, SPINRPC_PEER_SPINS=1 when it spins: docs/HARDENING.md).

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, symlinkSync, mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "./peers.mjs";

const { SyncRpcChannel } = await import(pathToFileURL(join(REPO_ROOT, "node", "index.mjs")).href);

// The binding offers shared memory unless SPINRPC_SHM=off says otherwise:
// these tests decide that themselves, case by case.
const SHM_WITHOUT = process.env.SPINRPC_SHM;
delete process.env.SPINRPC_SHM;
after(() => { if (SHM_WITHOUT !== undefined) process.env.SPINRPC_SHM = SHM_WITHOUT; });

const scratch = mkdtempSync(join(tmpdir(), "spinrpc-spawn-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

// Two tools the probe runs by absolute path: the child's PATH is what a
// test makes it, often one where neither is found.
const [TR, READLINK] = spawnSync("/bin/sh", ["-c", "command -v tr; command -v readlink"], { encoding: "utf8" })
  .stdout.trim().split("\n");

// What a probe reports: its $0 and arguments, and from /proc its signal
// state, open descriptors, what fd 3 is if it is open, and its environment
// as exec gave it (one entry a line, in order, after "environ:"). Builtins
// only up to the descriptors, so that the shell reports itself at rest
// (dash blocks every signal while it waits for a child it forked, and a grep
// would see that); the directory the glob reads is closed again before the
// test -e.
const PROBE_BODY = `{
  printf 'argv:'; for a in "$0" "$@"; do printf ' [%s]' "$a"; done; echo
  while IFS= read -r l; do case $l in Sig[BIC]*) echo "$l";; esac; done < /proc/$$/status
  printf 'fds:'; for f in /proc/$$/fd/*; do [ -e "$f" ] && printf ' %s' "\${f##*/}"; done; echo
  if [ -e /proc/$$/fd/3 ]; then printf 'fd 3: '; ${READLINK} /proc/$$/fd/3; fi
  echo environ:; ${TR} '\\0' '\\n' < /proc/$$/environ
} > "$PROBE_OUT"
`;

let files = 0;
/** Writes an executable (mode 0755 unless given) file in `dir`; returns its path. */
function writeProgram(dir, name, text, mode = 0o755) {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}
const probe = (dir, name, { shebang = true } = {}) =>
  writeProgram(dir, name, (shebang ? "#!/bin/sh\n" : "") + PROBE_BODY);

// The properties Node puts on a spawn error, in its order.
const errorShape = (e) => ({
  name: e.name,
  isError: e instanceof Error,
  message: e.message,
  keys: Object.keys(e),
  errno: e.errno,
  code: e.code,
  syscall: e.syscall,
  path: e.path,
  spawnargs: e.spawnargs,
});

// The probe's report goes to PROBE_OUT: in the env option when one is
// given, else in process.env, which the child then gets as Node's spawn
// and the binding pass it by default.
function withOut(env, fn) {
  const out = join(scratch, `out-${++files}`);
  // The env's prototype kept: spawn reads inherited keys too.
  if (env !== undefined) return fn(Object.assign(Object.create(Object.getPrototypeOf(env)), env, { PROBE_OUT: out }), out);
  process.env.PROBE_OUT = out;
  try {
    return fn(undefined, out);
  } finally {
    delete process.env.PROBE_OUT;
  }
}
const report = (out) => (existsSync(out) ? readFileSync(out, "utf8") : null);

/** Runs file/args through Node's spawn as the TS 7 channel does; the probe's report or the error. */
function throughNode(file, args, env) {
  return withOut(env, (childEnv, out) => new Promise((resolve) => {
    let child;
    try {
      child = spawn(file, args, { stdio: ["pipe", "pipe", "inherit"], ...(childEnv && { env: childEnv }) });
    } catch (e) {
      resolve({ error: errorShape(e) });
      return;
    }
    child.stdin?.end();  // EOF at once, as the binding's close() gives it
    child.on("error", (e) => resolve({ error: errorShape(e) }));
    child.on("close", (code, signal) => resolve({ code, signal, report: report(out) }));
  }));
}

/**
 * The same through the binding: the constructor spawns, close() reaps.
 * `options` are more of the binding's (sharedMemory).
 */
function throughBinding(file, args, env, options = {}) {
  return withOut(env, (childEnv, out) => {
    let channel;
    try {
      channel = new SyncRpcChannel(file, args, { closeGraceMs: 5000, ...options, ...(childEnv && { env: childEnv }) });
    } catch (e) {
      return { error: errorShape(e) };
    }
    channel.close();
    return { code: 0, signal: null, report: report(out) };
  });
}

// The descriptors a report lists; what it says fd 3 is (null when it is
// closed); its environment entries, in order (PROBE_OUT, which names a file
// of each run's own, left out).
const fdsOf = (report) => report?.match(/^fds: (.*)$/m)?.[1].split(" ").map(Number).sort((a, b) => a - b) ?? null;
const fd3Of = (report) => report?.match(/^fd 3: (.*)$/m)?.[1] ?? null;
const environOf = (report) =>
  report?.split("\nenviron:\n")[1]?.split("\n").filter((e) => e !== "" && !e.startsWith("PROBE_OUT=")) ?? null;
/** The report without its descriptors, fd 3's name and environment: what must be equal as it is. */
const withoutFds = (outcome) => ({
  ...outcome,
  report: outcome.report?.replace(/^fds: .*\n/m, "").replace(/^fd 3: .*\n/m, "").replace(/\nenviron:\n[^]*$/, "\n") ?? outcome.report,
});

// What the binding's child has that Node's has not, on purpose: the shared
// memory offered (docs/SHARED-MEMORY.md), and the entries for spinrpc-server
// that the shim and the binding add unless the environment names them
// already (docs/HARDENING.md, "Starting a child as Node does").
const MEMFD = "/memfd:spinrpc-ring (deleted)";
// The offer names this process, the child's parent, and the memfd's device
// and inode (docs/SHARED-MEMORY.md, "Handshake").
const OFFER_ENTRY = new RegExp(`^SPINRPC_SHM=fd:3,parent:${process.pid},inode:\\d+:\\d+$`);
const ADDED_ENTRIES = ["SPINRPC_LEND_REPLIES=1", "SPINRPC_PEER_SPINS=1"];

/**
 * Asserts that the binding's child got what Node's did, with `offered`
 * (whether the binding offered shared memory) deciding the only other
 * difference allowed: fd 3 the ring's memfd, and the offer (SPINRPC_SHM=fd:3,parent:…) in place
 * of any SPINRPC_SHM Node's child got.
 */
function assertSameChild(binding, node, offered, what) {
  assert.deepEqual(withoutFds(binding), withoutFds(node), `${what}: the binding against Node's spawn`);
  const [ours, nodes] = [fdsOf(binding.report), fdsOf(node.report)];
  if (!ours) return;  // an error, or a program of the test's own that reports something else
  // The descriptors agree up to what Node passes on that is not its own: a
  // descriptor this process inherited without close-on-exec reaches Node's
  // child (libuv closes nothing), never the binding's.
  assert.deepEqual(ours.filter((fd) => fd < 10), offered ? [0, 1, 2, 3] : [0, 1, 2],
    `${what}: the binding's child has 0, 1, 2${offered ? " and the offered 3" : ""} below 10`);
  if (offered) assert.equal(fd3Of(binding.report), MEMFD, `${what}: fd 3 is the ring's memfd`);
  else assert.equal(fd3Of(binding.report), null, `${what}: no fd 3 without the offer`);
  const beyond = ours.filter((fd) => !(offered && fd === 3));
  assert.deepEqual(nodes.filter((fd) => beyond.includes(fd)), beyond, `${what}: every other descriptor of the binding's child is in Node's`);
  // The environment: Node's, in Node's order, then the entries added.
  const theirs = environOf(node.report);
  let expected = offered ? theirs.filter((e) => !e.startsWith("SPINRPC_SHM=")) : theirs;
  const added = ADDED_ENTRIES.filter((e) => !theirs.some((t) => t.startsWith(e.slice(0, e.indexOf("=") + 1))));
  const got = environOf(binding.report).filter((e) => !added.includes(e));
  if (offered) assert.match(got.at(-1) ?? "", OFFER_ENTRY, `${what}: the offer, last`);
  assert.deepEqual(offered ? got.slice(0, -1) : got, expected,
    `${what}: the binding's child's environment is Node's${offered ? " and the offer" : ""}`);
}

/**
 * Both ways, the binding with and without shared memory; asserts they
 * agree and returns Node's outcome.
 */
async function same(file, args, env) {
  const node = await throughNode(file, args, env);
  assertSameChild(throughBinding(file, args, env), node, true, `${String(file)} (shared memory offered)`);
  assertSameChild(throughBinding(file, args, env, { sharedMemory: false }), node, false, `${String(file)} (sharedMemory: false)`);
  return node;
}

const PATH_WITHOUT = process.env.PATH;
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("the binding starts programs as Node's spawn does", () => {
  test("an executable without #! runs through /bin/sh, by path and through PATH", async () => {
    const dir = join(scratch, "noshebang");
    const path = probe(dir, "spinrpc-probe-plain", { shebang: false });
    let got = await same(path, ["a", "b c"]);
    assert.match(got.report, new RegExp(`^argv: \\[${escape(path)}\\] \\[a\\] \\[b c\\]$`, "m"));
    got = await same("spinrpc-probe-plain", ["x"], { ...process.env, PATH: `/nonexistent:${dir}` });
    assert.match(got.report, new RegExp(`^argv: \\[${escape(dir)}/spinrpc-probe-plain\\] \\[x\\]$`, "m"));
  });

  test("PATH is the env option's, not the process's", async () => {
    const dir = join(scratch, "envpath");
    probe(dir, "spinrpc-probe-envpath");
    // Found only through the option's PATH.
    let got = await same("spinrpc-probe-envpath", [], { ...process.env, PATH: `${dir}:/usr/bin:/bin` });
    assert.match(got.report, new RegExp(`^argv: \\[${escape(dir)}/spinrpc-probe-envpath\\]$`, "m"));
    // In the process's PATH but not the option's: not found.
    const saved = process.env.PATH;
    process.env.PATH = `${dir}:${saved}`;
    try {
      got = await same("spinrpc-probe-envpath", ["--api"], { ...process.env, PATH: "/nonexistent" });
      assert.equal(got.error.message, "spawn spinrpc-probe-envpath ENOENT");
      // No env option: the process's environment and its PATH.
      got = await same("spinrpc-probe-envpath", []);
      assert.ok(got.report);
    } finally {
      process.env.PATH = saved;
    }
  });

  test("PATH is the first entry that starts with PATH=, as the child's getenv reads it", async () => {
    const cmd = ["-c", "printf ran > \"$PROBE_OUT\""];
    // A key "PATH=" makes the entry "PATH==/usr/bin:/bin": its PATH is "=/usr/bin:/bin".
    assert.equal((await same("sh", cmd, { "PATH=": "/usr/bin:/bin", PATH: "/nonexistent" })).report, "ran");
    assert.equal((await same("sh", cmd, { PATH: "/nonexistent", "PATH=": "/usr/bin:/bin" })).error.code, "ENOENT");
    // A script whose #! interpreter is missing is ENOENT too: the search goes on.
    const first = join(scratch, "interp1");
    const second = join(scratch, "interp2");
    writeProgram(first, "spinrpc-probe-interp", "#!/nonexistent/sh\n");
    probe(second, "spinrpc-probe-interp");
    const got = await same("spinrpc-probe-interp", [], { ...process.env, PATH: `${first}:${second}` });
    assert.match(got.report, new RegExp(`^argv: \\[${escape(second)}/spinrpc-probe-interp\\]$`, "m"));
  });

  test("seeded PATHs over a candidate of every kind: the same program runs, or the same error", async () => {
    const root = join(scratch, "kinds");
    const kinds = {
      good: (d) => probe(d, "prog"),
      plain: (d) => probe(d, "prog", { shebang: false }),
      notExecutable: (d) => writeProgram(d, "prog", PROBE_BODY, 0o644),
      directory: (d) => mkdirSync(join(d, "prog"), { recursive: true }),
      missingInterpreter: (d) => writeProgram(d, "prog", "#!/nonexistent/sh\n"),
      loop: (d) => {
        mkdirSync(d, { recursive: true });
        symlinkSync(join(d, "prog2"), join(d, "prog"));
        symlinkSync(join(d, "prog"), join(d, "prog2"));
      },
      dangling: (d) => {
        mkdirSync(d, { recursive: true });
        symlinkSync(join(d, "none"), join(d, "prog"));
      },
      none: (d) => mkdirSync(d, { recursive: true }),
    };
    const entries = Object.entries(kinds).map(([kind, make]) => {
      make(join(root, kind));
      return join(root, kind);
    });
    entries.push("", "/nonexistent", join(root, "good", "prog"));  // the current directory, nothing, a file
    const cwd = process.cwd();
    process.chdir(join(root, "plain"));  // where an empty entry looks
    try {
      let x = 0x9a7;  // xorshift32
      const random = (n) => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x % n; };
      for (let i = 0; i < 40; i++) {
        const PATH = Array.from({ length: 1 + random(4) }, () => entries[random(entries.length)]).join(":");
        await same("prog", ["a"], { ...process.env, PATH });
      }
    } finally {
      process.chdir(cwd);
    }
  });

  test("an env without PATH searches /bin:/usr/bin", async () => {
    const env = { HOME: process.env.HOME ?? "/" };
    const got = await same("sh", ["-c", "tr '\\0' ' ' < /proc/$$/cmdline > \"$PROBE_OUT\""], env);
    assert.equal(got.report, "sh -c tr '\\0' ' ' < /proc/$$/cmdline > \"$PROBE_OUT\" ");
    const dir = join(scratch, "nopath");
    probe(dir, "spinrpc-probe-nopath");
    assert.equal((await same("spinrpc-probe-nopath", [], env)).error.code, "ENOENT");
  });

  test("argv[0] is the name as given, not the path found", async () => {
    const cmdline = "tr '\\0' ' ' < /proc/$$/cmdline > \"$PROBE_OUT\"";
    assert.equal((await same("sh", ["-c", cmdline])).report, `sh -c ${cmdline} `);
    assert.equal((await same("/bin/sh", ["-c", cmdline])).report, `/bin/sh -c ${cmdline} `);
  });

  test("an empty PATH entry is the current directory; a name with a slash is not searched", async () => {
    const dir = join(scratch, "cwd");
    probe(dir, "spinrpc-probe-cwd");
    probe(join(dir, "sub"), "spinrpc-probe-sub");
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const PATH of [":/nonexistent", "/nonexistent:", "/nonexistent::/bin", ""]) {
        const got = await same("spinrpc-probe-cwd", ["p"], { ...process.env, PATH });
        assert.match(got.report, /^argv: \[spinrpc-probe-cwd\] \[p\]$/m, PATH);
      }
      // sub/spinrpc-probe-sub exists under a PATH entry, not here: not found.
      process.chdir(scratch);
      const got = await same("sub/spinrpc-probe-sub", [], { ...process.env, PATH: dir });
      assert.equal(got.error.message, "spawn sub/spinrpc-probe-sub ENOENT");
    } finally {
      process.chdir(cwd);
    }
  });

  test("not executable: EACCES, unless a later PATH entry has one that is", async () => {
    const first = join(scratch, "eacces1");
    const second = join(scratch, "eacces2");
    writeProgram(first, "spinrpc-probe-mode", PROBE_BODY, 0o644);
    let got = await same(join(first, "spinrpc-probe-mode"), ["x"]);
    assert.equal(got.error.message, `spawn ${join(first, "spinrpc-probe-mode")} EACCES`);
    assert.deepEqual(got.error.spawnargs, ["x"]);
    got = await same("spinrpc-probe-mode", [], { ...process.env, PATH: `${first}:/nonexistent` });
    assert.equal(got.error.code, "EACCES");
    probe(second, "spinrpc-probe-mode");
    got = await same("spinrpc-probe-mode", [], { ...process.env, PATH: `${first}:${second}` });
    assert.match(got.report, new RegExp(`^argv: \\[${escape(second)}/spinrpc-probe-mode\\]$`, "m"));
    // A directory is not executable either.
    assert.equal((await same(scratch, [])).error.code, "EACCES");
  });

  test("errors Node's spawn throws rather than emits: the same error, thrown", async () => {
    const notDir = writeProgram(join(scratch, "enotdir"), "file", "", 0o644);
    const busy = probe(join(scratch, "etxtbsy"), "spinrpc-probe-busy");
    const writing = openSync(busy, "r+");  // a file open for writing cannot be executed
    const loop = join(scratch, "eloop-a");
    symlinkSync(join(scratch, "eloop-b"), loop);
    symlinkSync(loop, join(scratch, "eloop-b"));
    try {
      for (const [file, args, code] of [
        [join(notDir, "x"), ["--api"], "ENOTDIR"],
        ["x".repeat(300), ["--api"], "ENAMETOOLONG"],
        ["/bin/sh", ["x".repeat(200_000)], "E2BIG"],  // beyond one argument's 128 KiB
        [busy, [], "ETXTBSY"],
        [loop, [], "ELOOP"],
      ]) {
        const got = await same(file, args);
        assert.equal(got.error.message, `spawn ${code}`);
        assert.deepEqual(got.error.keys, ["errno", "code", "syscall"]);
      }
    } finally {
      closeSync(writing);
    }
    // A #! interpreter that does not exist: ENOENT, naming the script.
    const script = writeProgram(join(scratch, "badinterp"), "spinrpc-probe-interp", "#!/nonexistent/sh\n");
    assert.equal((await same(script, [])).error.message, `spawn ${script} ENOENT`);
  });

  test("what Node's spawn refuses before it starts anything: the same TypeError", async () => {
    const node = await throughNode("", []);
    assert.equal(node.error.code, "ERR_INVALID_ARG_VALUE");
    assert.deepEqual(throughBinding("", []), node);
    const cases = [
      [undefined, []], [null, []], [42, []], [{}, []], [() => 1, []], [Symbol("s"), []], [10n, []], [new String("/bin/sh"), []],
      ["/bin/sh\0x", []], ["x".repeat(200) + "\0", []],
      ["/bin/sh", "-c"], ["/bin/sh", 5], ["/bin/sh", ["-c", "a\0"]],
    ];
    for (const [file, args] of cases) {
      const got = await same(file, args);
      assert.equal(got.error?.name, "TypeError", String(file?.toString?.()));
    }
    for (const env of [{ A: "a\0b" }, { "B\0": "x" }, Object.create({ C: "c\0" })]) {
      assert.equal((await same("/bin/sh", [], env)).error.code, "ERR_INVALID_ARG_VALUE");
    }
  });

  test("an argument with no string (a Symbol, a toString that throws or gives no primitive): as this Node's spawn takes it", async () => {
    // Node 20's spawn throws what the conversion throws and starts nothing;
    // Node 22 and later pass "" and start the program. Each case is
    // compared with the running Node's spawn, and checked to be one of the two.
    const path = probe(join(scratch, "no-text"), "spinrpc-probe-no-text");
    for (const [label, arg, message] of [
      ["symbol", Symbol("q"), "Cannot convert a Symbol value to a string"],
      ["throwing toString", { toString() { throw new Error("no text"); } }, "no text"],
      ["no primitive", Object.create(null), "Cannot convert object to primitive value"],
    ]) {
      const got = await same(path, ["before", arg, "after"]);
      if (got.error) assert.equal(got.error.message, message, label);
      else assert.match(got.report, new RegExp(`^argv: \\[${escape(path)}\\] \\[before\\] \\[\\] \\[after\\]$`, "m"), label);
    }
    // In the env, every line skips a Symbol key and refuses a Symbol value.
    assert.match((await same(path, [], { [Symbol("k")]: "x" })).report, /^argv: /m);
    assert.equal((await same(path, [], { A: Symbol("v") })).error.message, "Cannot convert a Symbol value to a string");
  });

  test("a falsy env option is none: the process's environment, as `options.env || process.env`", async () => {
    for (const env of [null, false, ""]) {
      const out = join(scratch, `out-falsy-${files++}`);
      process.env.PROBE_OUT = out;
      try {
        const cmd = ["-c", 'printf "%s" "$PROBE_OUT" > "$PROBE_OUT"'];
        const node = await new Promise((resolve) => {
          const child = spawn("sh", cmd, { stdio: ["pipe", "pipe", "inherit"], env });
          child.stdin.end();
          child.on("close", () => resolve(readFileSync(out, "utf8")));
        });
        rmSync(out);
        new SyncRpcChannel("sh", cmd, { env }).close();
        assert.equal(readFileSync(out, "utf8"), node, String(env));
      } finally {
        delete process.env.PROBE_OUT;
      }
    }
  });

  test("args that are not strings are passed as strings, as spawn passes them", async () => {
    const got = await same("/bin/sh", ["-c", 'printf "%s|" "$@" > "$PROBE_OUT"', "sh", 1, null, true, { toString: () => "T" }]);
    assert.equal(got.report, "1|null|true|T|");
  });

  test("out of descriptors (ulimit -n): EMFILE, as Node's spawn reports it", () => {
    const script = join(scratch, "emfile.mjs");
    writeFileSync(script, `
      import { spawn, spawnSync } from "node:child_process";
      import { openSync } from "node:fs";
      const { SyncRpcChannel } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, "node", "index.mjs")).href)});
      const shape = (e) => ({ message: e.message, keys: Object.keys(e), errno: e.errno, code: e.code, syscall: e.syscall, path: e.path, spawnargs: e.spawnargs });
      const held = [];
      try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
      let binding = null;
      try { new SyncRpcChannel("/bin/cat", ["-u"]).close(); } catch (e) { binding = shape(e); }
      const node = await new Promise((resolve) => {
        try {
          const child = spawn("/bin/cat", ["-u"], { stdio: ["pipe", "pipe", "inherit"] });
          child.on("error", (e) => resolve(shape(e)));
          child.on("close", () => resolve(null));
        } catch (e) { resolve(shape(e)); }
      });
      console.log(JSON.stringify({ binding, node }));
      process.exit(0);
    `);
    const run = spawnSync("/bin/sh", ["-c", 'ulimit -n 64 && exec "$0" "$1"', process.execPath, script], { encoding: "utf8", timeout: 30_000 });
    assert.equal(run.status, 0, run.stderr);
    const { binding, node } = JSON.parse(run.stdout);
    assert.equal(node?.message, "spawn /bin/cat EMFILE");
    assert.deepEqual(binding, node);
  });

  test("signal dispositions and mask: every signal at its default, none blocked", async () => {
    // Node ignores SIGPIPE and SIGXFSZ itself; neither reaches the child.
    const dir = join(scratch, "signals");
    const path = probe(dir, "spinrpc-probe-signals");
    const got = await same(path, []);
    assert.match(got.report, /^SigBlk:\s+0+$/m);
    assert.match(got.report, /^SigIgn:\s+0+$/m);
  });

  test("in a worker: the worker's process.env, its PATH included, and an empty mask", async () => {
    const dir = join(scratch, "worker");
    probe(dir, "spinrpc-probe-worker");
    const code = `
      const { parentPort, workerData } = require("node:worker_threads");
      const { spawn } = require("node:child_process");
      const { existsSync, readFileSync } = require("node:fs");
      (async () => {
        const { SyncRpcChannel } = await import(workerData.index);
        // The worker's own copy of the environment: the process's PATH lacks dir.
        process.env.PATH = workerData.dir + ":" + process.env.PATH;
        const run = (through) => {
          const out = workerData.out + "-" + through;
          process.env.PROBE_OUT = out;
          const read = () => (existsSync(out) ? readFileSync(out, "utf8") : null);
          if (through !== "node") {
            const options = through === "bindingOff" ? { sharedMemory: false } : undefined;
            try { new SyncRpcChannel("spinrpc-probe-worker", [], options).close(); } catch (e) { return e.message; }
            return read();
          }
          return new Promise((resolve) => {
            const child = spawn("spinrpc-probe-worker", [], { stdio: ["pipe", "pipe", "inherit"] });
            child.on("error", (e) => resolve(e.message));
            child.on("close", () => resolve(read()));
          });
        };
        parentPort.postMessage({ node: await run("node"), binding: run("binding"), bindingOff: run("bindingOff") });
      })();`;
    const { Worker } = await import("node:worker_threads");
    const worker = new Worker(code, {
      eval: true,
      workerData: { index: pathToFileURL(join(REPO_ROOT, "node", "index.mjs")).href, dir, out: join(scratch, "worker-out") },
    });
    const got = await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    assert.equal(process.env.PATH, PATH_WITHOUT, "the worker's PATH is its own");
    assert.match(got.node, new RegExp(`^argv: \\[${escape(dir)}/spinrpc-probe-worker\\]$`, "m"));
    assertSameChild({ report: got.binding }, { report: got.node }, true, "worker (shared memory offered)");
    assertSameChild({ report: got.bindingOff }, { report: got.node }, false, "worker (sharedMemory: false)");
    assert.match(got.binding, /^SigBlk:\s+0+$/m);
  });

  test("SPINRPC_SHM: off (the env option's or the process's) gives the child what Node's gets; sharedMemory beats it; an offer replaces any other", async () => {
    const path = probe(join(scratch, "shm"), "spinrpc-probe-shm");
    const off = { ...process.env, SPINRPC_SHM: "off" };
    let node = await throughNode(path, ["a"], off);
    assertSameChild(throughBinding(path, ["a"], off), node, false, "env option SPINRPC_SHM=off");
    assertSameChild(throughBinding(path, ["a"], off, { sharedMemory: true }), node, true, "sharedMemory: true over SPINRPC_SHM=off");
    assertSameChild(throughBinding(path, ["a"], off, { sharedMemory: false }), node, false, "sharedMemory: false and SPINRPC_SHM=off");
    // An offer the child would inherit (another client's, to this process):
    // not off, so the binding offers its own in its place.
    const stale = { ...process.env, SPINRPC_SHM: "fd:7,parent:1,inode:1:2" };
    node = await throughNode(path, ["a"], stale);
    assertSameChild(throughBinding(path, ["a"], stale), node, true, "another client's offer inherited");
    process.env.SPINRPC_SHM = "off";
    try {
      node = await throughNode(path, ["a"]);
      assertSameChild(throughBinding(path, ["a"]), node, false, "process.env SPINRPC_SHM=off");
      assert.ok(environOf(node.report).includes("SPINRPC_SHM=off"));
    } finally {
      delete process.env.SPINRPC_SHM;
    }
  });

  test("descriptors: 0, 1 and 2 only (and 3, the memfd offered), whatever this process has open", async () => {
    const dir = join(scratch, "fds");
    const path = probe(dir, "spinrpc-probe-fds");
    // Node's own descriptors are close-on-exec: neither child gets them.
    const held = [openSync(path, "r"), openSync(join(dir, "other"), "w")];
    const other = new SyncRpcChannel("/bin/sh", ["-c", "exec cat"]);  // another child's pipes
    try {
      const got = await same(path, []);
      for (const fd of held) assert.ok(!fdsOf(got.report).includes(fd), `Node's child has our fd ${fd}`);
    } finally {
      other.close();
      for (const fd of held) closeSync(fd);
    }
  });
});

test("no PATH change leaks from these tests", () => assert.equal(process.env.PATH, PATH_WITHOUT));
