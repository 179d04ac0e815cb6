#!/usr/bin/env node
// walk: an API extractor in the style of jsii over the TypeScript 7 sync API
// (@typescript/native-preview/unstable/sync) and the real tsgo. For every
// exported declaration of the modules it is given it asks, one symbol per
// request (never the batched array forms), what such tools ask: the module's
// exports, aliases, the declared type and the type of the symbol, base types,
// members, each member's type (of the symbol, at its declaration, of the
// symbol at that location), call and construct signatures with their
// parameters and return types, type strings, JSDoc tags and documentation
// comments. bench/workload/README.md describes the workload it records.
//
//   node bench/workload/walk.mjs --project DIR [--tsgo PATH] [--out FILE]
//                                [--gaps FILE] [--json FILE]
//
// --project DIR  a directory holding tsconfig.json; every root file is walked
//                as a module, in the order the program lists them
// --tsgo PATH    the server the API spawns (tsserverPath); default: the
//                interop suite's tsgo (SPINRPC_TSGO overrides it)
// --out FILE     the walk's output: one line per declaration and member
//                (what a binding generator would keep); compared byte for
//                byte with and without the recording proxy
// --gaps FILE    one line per request the client sent, in order: method and
//                the client's gap before its next request, in ns, measured
//                around the channel's requestSync/requestBinarySync
// --json FILE    wall clock and CPU of this process and of the server
//
// Under `node --import node/register.mjs` the Node binding replaces the
// JS SyncRpcChannel and the walk is otherwise unchanged.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { onlyChildPid, procCpuSeconds } from "../node/proc_cpu.mjs";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PKG = join(REPO, "tests", "interop", "node_modules", "@typescript", "native-preview");
const DEFAULT_TSGO = process.env.SPINRPC_TSGO ?? join(PKG, "..", "native-preview-linux-x64", "lib", "tsgo");

function usage(msg) {
  if (msg) console.error(`walk: ${msg}`);
  console.error("usage: node bench/workload/walk.mjs --project DIR [--tsgo PATH] [--out FILE] [--gaps FILE] [--json FILE]");
  process.exit(2);
}
const opts = { project: null, tsgo: DEFAULT_TSGO, out: null, gaps: null, json: null };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const key = { "--project": "project", "--tsgo": "tsgo", "--out": "out", "--gaps": "gaps", "--json": "json" }[argv[i]];
    if (!key) usage(`unknown argument ${argv[i]}`);
    const v = argv[++i];
    if (v === undefined) usage(`${argv[i - 1]} needs a value`);
    opts[key] = v;
  }
  if (!opts.project) usage("--project is required");
}

const sync = await import(pathToFileURL(join(PKG, "dist", "api", "sync", "api.js")).href);
const { API, SymbolFlags, SignatureKind } = sync;

const wallStart = performance.now();
const cpuStart = process.cpuUsage();
const projectDir = resolve(opts.project);
const api = new API({ tsserverPath: opts.tsgo, cwd: projectDir });

// Client gaps: the time from one reply's arrival to the next request's
// send, spent in this process (the walk's own work), measured around the
// channel calls so a proxy's wake-ups cannot inflate it.
const channel = api["client"]["channel"];
const methods = [];
const starts = [];
const ends = [];
for (const name of ["requestSync", "requestBinarySync"]) {
  const original = channel[name].bind(channel);
  channel[name] = (method, payload) => {
    starts.push(performance.now());
    try {
      return original(method, payload);
    } finally {
      ends.push(performance.now());
      methods.push(method);
    }
  };
}
// The server's pid: the JS channel keeps its ChildProcess; a channel that
// does not (the binding) has spawned this process's only child.
const serverPid = channel.child?.pid ?? onlyChildPid();

const lines = [];
const out = (...fields) => lines.push(fields.join("\t"));

const snapshot = api.updateSnapshot({ openProject: join(projectDir, "tsconfig.json") });
const project = snapshot.getProjects()[0];
if (!project) throw new Error(`walk: no project in ${projectDir}`);
const { checker, program } = project;

const seenTypes = new Set();
function typeText(type) {
  if (!type) return "?";
  return checker.typeToString(type);
}
function docs(symbol) {
  const tags = checker.getJsDocTagsOfSymbol(symbol);
  const comment = checker.getDocumentationCommentOfSymbol(symbol);
  const digest = createHash("sha1").update(comment).update(JSON.stringify(tags)).digest("hex").slice(0, 12);
  return `${tags.map((t) => t.name).join(",")}:${digest}`;
}
function declarationNode(symbol) {
  const handle = symbol.valueDeclaration ?? symbol.declarations[0];
  return handle?.resolve(project);
}
function signatures(type, kind, label, prefix) {
  for (const signature of checker.getSignaturesOfType(type, kind)) {
    const params = signature.getParameters().map((p) => {
      const pt = checker.getTypeOfSymbol(p);
      return `${p.name}: ${typeText(pt)} ${docs(p)}`;
    });
    const ret = checker.getReturnTypeOfSignature(signature);
    out(prefix, label, `(${params.join(", ")}) => ${typeText(ret)}`);
  }
}
function members(type, prefix) {
  for (const member of checker.getPropertiesOfType(type)) {
    const memberType = checker.getTypeOfSymbol(member);
    const node = declarationNode(member);
    let atLocation = "-";
    if (node) {
      atLocation = typeText(checker.getTypeAtLocation(node));
      checker.getTypeOfSymbolAtLocation(member, node);
    }
    out(prefix, member.name, member.flags, typeText(memberType), atLocation, docs(member));
    if (member.flags & SymbolFlags.Method && memberType) {
      signatures(memberType, SignatureKind.Call, `${member.name}()`, prefix);
    }
  }
}
function walkExport(moduleName, exported) {
  let symbol = exported;
  if (symbol.flags & SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const prefix = `${moduleName}.${exported.name}`;
  out(prefix, symbol.flags, docs(symbol));
  if (symbol.flags & (SymbolFlags.Class | SymbolFlags.Interface)) {
    const declared = checker.getDeclaredTypeOfSymbol(symbol);
    if (!seenTypes.has(declared.id)) {
      seenTypes.add(declared.id);
      for (const base of checker.getBaseTypes(declared)) out(prefix, "extends", typeText(base));
      members(declared, prefix);
    }
    if (symbol.flags & SymbolFlags.Class) {
      const staticType = checker.getTypeOfSymbol(symbol);
      if (staticType) signatures(staticType, SignatureKind.Construct, "new", prefix);
    }
  } else if (symbol.flags & SymbolFlags.Enum) {
    for (const member of symbol.getExports().values()) {
      out(prefix, member.name, checker.getConstantValue(declarationNode(member)) ?? "-", docs(member));
    }
  } else if (symbol.flags & (SymbolFlags.Function | SymbolFlags.Variable)) {
    const type = checker.getTypeOfSymbol(symbol);
    out(prefix, "type", typeText(type));
    if (type && symbol.flags & SymbolFlags.Function) signatures(type, SignatureKind.Call, "call", prefix);
  } else if (symbol.flags & SymbolFlags.TypeAlias) {
    out(prefix, "alias", typeText(checker.getDeclaredTypeOfSymbol(symbol)));
  } else if (symbol.flags & (SymbolFlags.Module | SymbolFlags.ValueModule | SymbolFlags.NamespaceModule)) {
    for (const inner of checker.getExportsOfModule(symbol)) walkExport(prefix, inner);
  }
}

for (const fileName of project.rootFiles) {
  const file = program.getSourceFile(fileName);
  const moduleSymbol = file && checker.getSymbolAtLocation(file);
  const moduleName = fileName.includes("/node_modules/") ? fileName.slice(fileName.lastIndexOf("/node_modules/") + 14) : fileName.slice(projectDir.length + 1);
  if (!moduleSymbol) { out(moduleName, "no module symbol"); continue; }
  for (const exported of checker.getExportsOfModule(moduleSymbol)) walkExport(moduleName, exported);
}

const serverCpu = serverPid ? procCpuSeconds(serverPid) : NaN;
// The binding's spin counters (docs/SPIN.md#counters): what its waits did
// in this walk. The pure-JS channel has none.
const channelStats = typeof channel.stats === "function" ? channel.stats() : null;
api.close();
const wallMs = performance.now() - wallStart;
const cpu = process.cpuUsage(cpuStart);

const text = lines.join("\n") + "\n";
if (opts.out) writeFileSync(opts.out, text);
if (opts.gaps) {
  const rows = methods.map((m, i) => `${m}\t${i + 1 < starts.length ? Math.round((starts[i + 1] - ends[i]) * 1e6) : -1}`);
  writeFileSync(opts.gaps, rows.join("\n") + "\n");
}
const summary = {
  requests: methods.length, lines: lines.length, wallMs,
  clientCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs: Number.isNaN(serverCpu) ? null : serverCpu * 1e3,
  outputSha1: createHash("sha1").update(text).digest("hex"),
  channelStats,
};
if (opts.json) writeFileSync(opts.json, JSON.stringify(summary, null, 2) + "\n");
console.error(`walk: ${summary.requests} requests, ${summary.lines} lines, ${wallMs.toFixed(0)} ms, output sha1 ${summary.outputSha1}`);

