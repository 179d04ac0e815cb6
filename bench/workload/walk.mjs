#!/usr/bin/env node
// walk: an API extractor in the style of jsii over the TypeScript 7 sync API
// and a real TypeScript 7 server. For every exported declaration of the
// modules it is given it asks what such tools ask: the module's exports,
// aliases, the declared type and the type of the symbol, base types,
// members, each member's type (of the symbol, at its declaration, of the
// symbol at that location), call and construct signatures with their
// parameters and return types, type strings, JSDoc tags and documentation
// comments. bench/workload/README.md describes the workload it records.
//
//   node bench/workload/walk.mjs --project DIR [--ts ID] [--batch] [--tsgo PATH]
//                                [--out FILE] [--gaps FILE] [--json FILE]
//
// --project DIR  a directory holding tsconfig.json; every root file is walked
//                as a module, in the order the program lists them
// --ts ID        the TypeScript version whose sync API (and, by default,
//                whose own server) the walk uses: an id from
//                tests/interop/versions.mjs (preview, 7.0, 7.1-beta,
//                7.1-dev); default 7.0 (typescript@7.0.2). The walk asks the
//                same questions on every version, under each API's names
//                (7.0: api.updateSnapshot, project.rootFiles; 7.1:
//                api.createSnapshot, project.parsedCommandLine.fileNames)
// --batch        7.1 only: ask through API.batch (the batchRequests method)
//                wherever the questions are independent, in rounds (the
//                modules and their exports; the shapes of the declarations;
//                one declaration node per source file; the members); the
//                output is the same as without it. Without it (and always on
//                7.0) one question per request, depth first, as jsii does
// --tsgo PATH    the server the API spawns (tsserverPath); default:
//                SPINRPC_TSGO if set, else the version's own server
// --out FILE     the walk's output: one line per declaration and member
//                (what a binding generator would keep); compared byte for
//                byte with and without the recording proxy, the binding, --batch
// --gaps FILE    one line per request the client sent, in order: method and
//                the client's gap before its next request, in ns, measured
//                around the channel's requestSync/requestBinarySync
// --json FILE    wall clock and CPU of this process and of the server, the
//                requests sent, the questions asked by method (inside
//                batches too), the output's sha1
//
// Under `node --import node/register.mjs` the Node binding replaces the
// JS SyncRpcChannel and the walk is otherwise unchanged.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { commandLine } from "../harness/cli.mjs";
import { onlyChildPid, procCpuSeconds } from "../node/proc_cpu.mjs";

const USAGE = "usage: node bench/workload/walk.mjs --project DIR [--ts ID] [--batch] [--tsgo PATH] [--out FILE] [--gaps FILE] [--json FILE]";
const cli = commandLine("walk", USAGE);
const usage = cli.fail;
const opts = (() => {
  const text = { type: "string" };
  const v = cli.parse({ project: text, ts: { type: "string", default: "7.0" }, batch: { type: "boolean", default: false }, tsgo: text, out: text, gaps: text, json: text });
  if (!v.project) usage("--project is required");
  return { project: v.project, ts: v.ts, batch: v.batch, tsgo: v.tsgo ?? null, out: v.out ?? null, gaps: v.gaps ?? null, json: v.json ?? null };
})();
// Every pinned version, whatever SPINRPC_INTEROP_VERSIONS narrows the
// interop suite's list to (a test that runs this walk may have set it).
const narrowed = process.env.SPINRPC_INTEROP_VERSIONS;
delete process.env.SPINRPC_INTEROP_VERSIONS;
const { version: tsVersion } = await import("../../tests/interop/versions.mjs");
if (narrowed !== undefined) process.env.SPINRPC_INTEROP_VERSIONS = narrowed;
let ts;
try {
  ts = tsVersion(opts.ts);
} catch (e) {
  usage(`--ts ${opts.ts}: ${e.message} (tests/interop/versions.mjs; run scripts/setup.sh if the interop suite's npm install is missing)`);
}
const DIALECT_71 = ts.dialect === "7.1";
if (opts.batch && !DIALECT_71) {
  console.error(`walk: --batch needs the 7.1 API (API.batch, the batchRequests method); ${ts.name}@${ts.version} (--ts ${ts.id}) speaks ${ts.dialect}, which has neither. Use --ts 7.1-dev or --ts 7.1-beta, or drop --batch.`);
  process.exit(2);
}
const server = opts.tsgo ?? process.env.SPINRPC_TSGO ?? ts.server;

const sync = await import(ts.syncUrl);
const { API, SymbolFlags, SignatureKind } = sync;

const wallStart = performance.now();
const cpuStart = process.cpuUsage();
const projectDir = resolve(opts.project);
const api = new API({ tsserverPath: server, cwd: projectDir });

// Client gaps: the time from one reply's arrival to the next request's
// send, spent in this process (the walk's own work), measured around the
// channel calls so a proxy's wake-ups cannot inflate it. On 7.1 the
// channel is also the client's transport (TransportClient calls
// this.transport.requestSync), so the same wrappers see every request.
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
// The questions asked inside batches, by method (7.1's
// TransportClient.batchRequests; each call may page into several requests).
const batched = new Map();
let batchCalls = 0;
if (DIALECT_71) {
  const client = api["client"];
  const original = client.batchRequests.bind(client);
  client.batchRequests = (requests) => {
    batchCalls++;
    for (const r of requests) batched.set(r.method, (batched.get(r.method) ?? 0) + 1);
    return original(requests);
  };
}
// The server's pid: the JS channel keeps its ChildProcess; a channel that
// does not (the binding) has spawned this process's only child.
const serverPid = channel.child?.pid ?? onlyChildPid();

// The project, under each API's names.
const tsconfig = join(projectDir, "tsconfig.json");
const snapshot = DIALECT_71 ? api.createSnapshot({ openProjects: [tsconfig] }) : api.updateSnapshot({ openProject: tsconfig });
const project = snapshot.getProjects()[0];
if (!project) throw new Error(`walk: no project in ${projectDir}`);
const { checker, program } = project;
const rootFiles = DIALECT_71 ? project.parsedCommandLine.fileNames : project.rootFiles;
const moduleNameOf = (fileName) => fileName.includes("/node_modules/")
  ? fileName.slice(fileName.lastIndexOf("/node_modules/") + 14)
  : fileName.slice(projectDir.length + 1);

// What both walks print, formatted in one place.
const line = (...fields) => fields.join("\t");
const docText = (tags, comment) =>
  `${tags.map((t) => t.name).join(",")}:${createHash("sha1").update(comment).update(JSON.stringify(tags)).digest("hex").slice(0, 12)}`;
// A private name's symbol is named `__#N@#name`, N the server's id for the
// class symbol, which tsgo hands out in whatever order its threads reach the
// classes: it changes from run to run (7.0.2: 3, 4, 3 for the same class in
// three runs). Printed without it, so that every run prints the same lines.
const memberName = (symbol) => symbol.name.replace(/^__#\d+@/, "__#@");
// Flags are printed without Transient: whether the checker hands out its
// own symbol for a class's property or a transient copy depends on what it
// was asked before. A getter inherited from a base class is transient in
// the class whose properties are asked first, and not in the next ones once
// the getter's type has been asked (7.0.2 and 7.1 alike), so the batched
// walk, which asks every class's properties before any member's type, would
// print other flags than the depth-first one for the same declarations.
const shownFlags = (symbol) => symbol.flags & ~SymbolFlags.Transient;
const declarationHandle = (symbol) => symbol.valueDeclaration ?? symbol.declarations[0];
const CLASS_OR_INTERFACE = SymbolFlags.Class | SymbolFlags.Interface;
const FUNCTION_OR_VARIABLE = SymbolFlags.Function | SymbolFlags.Variable;
const MODULE = SymbolFlags.Module | SymbolFlags.ValueModule | SymbolFlags.NamespaceModule;

const lines = opts.batch ? walkBatched() : walkOneByOne();

// ---------------------------------------------------------------------------
// One question per request, depth first (7.0 and 7.1).
function walkOneByOne() {
  const lines = [];
  const out = (...fields) => lines.push(line(...fields));
  const seenTypes = new Set();
  const typeText = (type) => type ? checker.typeToString(type) : "?";
  const docs = (symbol) => docText(checker.getJsDocTagsOfSymbol(symbol), checker.getDocumentationCommentOfSymbol(symbol));
  const declarationNode = (symbol) => declarationHandle(symbol)?.resolve(project);
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
      out(prefix, memberName(member), shownFlags(member), typeText(memberType), atLocation, docs(member));
      if (member.flags & SymbolFlags.Method && memberType) {
        signatures(memberType, SignatureKind.Call, `${memberName(member)}()`, prefix);
      }
    }
  }
  function walkExport(moduleName, exported) {
    let symbol = exported;
    if (symbol.flags & SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const prefix = `${moduleName}.${exported.name}`;
    out(prefix, shownFlags(symbol), docs(symbol));
    if (symbol.flags & CLASS_OR_INTERFACE) {
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
        out(prefix, memberName(member), checker.getConstantValue(declarationNode(member)) ?? "-", docs(member));
      }
    } else if (symbol.flags & FUNCTION_OR_VARIABLE) {
      const type = checker.getTypeOfSymbol(symbol);
      out(prefix, "type", typeText(type));
      if (type && symbol.flags & SymbolFlags.Function) signatures(type, SignatureKind.Call, "call", prefix);
    } else if (symbol.flags & SymbolFlags.TypeAlias) {
      out(prefix, "alias", typeText(checker.getDeclaredTypeOfSymbol(symbol)));
    } else if (symbol.flags & MODULE) {
      for (const inner of checker.getExportsOfModule(symbol)) walkExport(prefix, inner);
    }
  }
  for (const fileName of rootFiles) {
    const file = program.getSourceFile(fileName);
    const moduleSymbol = file && checker.getSymbolAtLocation(file);
    const moduleName = moduleNameOf(fileName);
    if (!moduleSymbol) { out(moduleName, "no module symbol"); continue; }
    for (const exported of checker.getExportsOfModule(moduleSymbol)) walkExport(moduleName, exported);
  }
  return lines;
}

// ---------------------------------------------------------------------------
// The same questions through API.batch (7.1), in rounds; each round is one
// api.batch over independent generators (the API's `.gen` forms), which the
// client sends as batchRequests, one per step of the deepest generator. The
// output is assembled afterwards in the depth-first walk's order, so it is
// the same lines as walkOneByOne's.
function walkBatched() {
  const { all } = sync;
  // The sync client answers some questions from its caches once asked
  // (a type's signatures, a signature's parameters and return type, a
  // symbol's exports), so the one-by-one walk asks each of them once.
  // Generators running side by side in one batch would each miss the cache
  // and ask again; `once` lets the first ask and the others wait for its
  // answer a round at a time (yielding an empty request group, which sends
  // nothing), so the batched walk asks the same questions, no more.
  const flights = new WeakMap();
  const parameterFlights = {};
  const once = function* (object, key, ask) {
    let byKey = flights.get(object);
    if (!byKey) flights.set(object, byKey = new Map());
    let flight = byKey.get(key);
    if (!flight) {
      byKey.set(key, flight = { done: false });
      try {
        flight.value = yield* ask();
      } catch (error) {
        flight.error = error;
        throw error;
      } finally {
        flight.done = true;
      }
      return flight.value;
    }
    while (!flight.done) yield [];
    if (flight.error) throw flight.error;
    return flight.value;
  };
  const typeTextG = function* (type) { return type ? yield* checker.typeToString.gen(type) : "?"; };
  const docsG = function* (symbol) {
    const [tags, comment] = yield* all(checker.getJsDocTagsOfSymbol.gen(symbol), checker.getDocumentationCommentOfSymbol.gen(symbol));
    return docText(tags, comment);
  };
  const typeOfSymbolTextG = function* (symbol) { return yield* typeTextG(yield* checker.getTypeOfSymbol.gen(symbol)); };
  const parameterG = function* (p) {
    const [type, docs] = yield* all(typeOfSymbolTextG(p), docsG(p));
    return `${p.name}: ${type} ${docs}`;
  };
  const returnTextG = function* (signature) {
    return yield* typeTextG(yield* once(signature, "return", () => checker.getReturnTypeOfSignature.gen(signature)));
  };
  const signatureLineG = function* (signature, label, prefix) {
    // Keyed by the parameters' references, as the client's cache is: two
    // signatures with the same parameter symbols (an inherited method's)
    // fetch them once.
    const params = yield* once(parameterFlights, JSON.stringify(signature.parameters), () => signature.getParameters.gen());
    const [texts, ret] = yield* all(all(...params.map(parameterG)), returnTextG(signature));
    return line(prefix, label, `(${texts.join(", ")}) => ${ret}`);
  };
  const signaturesG = function* (type, kind, label, prefix) {
    const signatures = yield* once(type, `signatures ${kind}`, () => checker.getSignaturesOfType.gen(type, kind));
    return yield* all(...signatures.map((s) => signatureLineG(s, label, prefix)));
  };

  // Round 1: the modules, their exports, aliases resolved, each declaration's
  // flags and docs, the declared type of classes and interfaces, namespaces'
  // exports, recursively: a tree in the order the depth-first walk visits it.
  const describeG = function* (moduleName, exported) {
    const symbol = exported.flags & SymbolFlags.Alias ? yield* checker.getAliasedSymbol.gen(exported) : exported;
    const node = { prefix: `${moduleName}.${exported.name}`, symbol };
    if (symbol.flags & CLASS_OR_INTERFACE) {
      [node.docs, node.declared] = yield* all(docsG(symbol), checker.getDeclaredTypeOfSymbol.gen(symbol));
    } else if (!(symbol.flags & (SymbolFlags.Enum | FUNCTION_OR_VARIABLE | SymbolFlags.TypeAlias)) && symbol.flags & MODULE) {
      const [docs, inner] = yield* all(docsG(symbol), checker.getExportsOfModule.gen(symbol));
      node.docs = docs;
      node.children = yield* all(...inner.map((e) => describeG(node.prefix, e)));
    } else {
      node.docs = yield* docsG(symbol);
    }
    return node;
  };
  const modules = api.batch(...rootFiles.map(function* (fileName) {
    const moduleName = moduleNameOf(fileName);
    const file = yield* program.getSourceFile.gen(fileName);
    const moduleSymbol = file && (yield* checker.getSymbolAtLocation.gen(file));
    if (!moduleSymbol) return { moduleName, nodes: null };
    const exported = yield* checker.getExportsOfModule.gen(moduleSymbol);
    return { moduleName, nodes: yield* all(...exported.map((e) => describeG(moduleName, e))) };
  }));

  // Which classes and interfaces have their members walked: the first
  // occurrence of each declared type in depth-first order, as the
  // one-by-one walk decides it.
  const nodes = [];
  const seenTypes = new Set();
  const visit = (node) => {
    nodes.push(node);
    if (node.declared && !seenTypes.has(node.declared.id)) {
      seenTypes.add(node.declared.id);
      node.first = true;
    }
    node.children?.forEach(visit);
  };
  for (const m of modules) m.nodes?.forEach(visit);

  // Round 2: each declaration's shape: base types and properties of the
  // classes and interfaces walked, construct signatures, enum members, the
  // types and call signatures of functions and variables, aliases.
  const shapeG = function* (node) {
    const { symbol, prefix } = node;
    const flags = symbol.flags;
    if (flags & CLASS_OR_INTERFACE) {
      const [bases, members, ctors] = yield* all(
        node.first ? function* () { return yield* all(...(yield* checker.getBaseTypes.gen(node.declared)).map(typeTextG)); }() : all(),
        node.first ? checker.getPropertiesOfType.gen(node.declared) : all(),
        flags & SymbolFlags.Class ? function* () {
          const staticType = yield* checker.getTypeOfSymbol.gen(symbol);
          return staticType ? yield* signaturesG(staticType, SignatureKind.Construct, "new", prefix) : [];
        }() : all());
      node.head = bases.map((b) => line(prefix, "extends", b));
      node.members = members;
      node.tail = ctors;
    } else if (flags & SymbolFlags.Enum) {
      node.enumMembers = [...(yield* once(symbol, "exports", () => symbol.getExports.gen())).values()];
    } else if (flags & FUNCTION_OR_VARIABLE) {
      const type = yield* checker.getTypeOfSymbol.gen(symbol);
      const [text, calls] = yield* all(typeTextG(type),
        type && flags & SymbolFlags.Function ? signaturesG(type, SignatureKind.Call, "call", prefix) : all());
      node.tail = [line(prefix, "type", text), ...calls];
    } else if (flags & SymbolFlags.TypeAlias) {
      node.tail = [line(prefix, "alias", yield* typeTextG(yield* checker.getDeclaredTypeOfSymbol.gen(symbol)))];
    }
  };
  api.batch(...nodes.map(shapeG));

  // Round 3: one declaration node per source file the members are declared
  // in, so that round 4 finds every file in the client's cache (API.batch
  // does not merge the same getSourceFile asked by many generators at once;
  // the one-by-one walk fetches each file once too).
  const handles = new Map();
  for (const node of nodes) {
    for (const member of [...(node.members ?? []), ...(node.enumMembers ?? [])]) {
      const handle = declarationHandle(member);
      if (handle && !handles.has(handle.sourceFileId)) handles.set(handle.sourceFileId, handle);
    }
  }
  api.batch(...[...handles.values()].map((h) => h.resolve.gen(project)));

  // Round 4: the members.
  const memberG = function* (member, prefix) {
    const handle = declarationHandle(member);
    const node = handle ? yield* handle.resolve.gen(project) : undefined;
    const [[typeText, calls], atLocation, docs] = yield* all(
      function* () {
        const type = yield* checker.getTypeOfSymbol.gen(member);
        const [text, calls] = yield* all(typeTextG(type),
          member.flags & SymbolFlags.Method && type ? signaturesG(type, SignatureKind.Call, `${memberName(member)}()`, prefix) : all());
        return [text, calls];
      }(),
      node ? function* () {
        const [text] = yield* all(
          function* () { return yield* typeTextG(yield* checker.getTypeAtLocation.gen(node)); }(),
          checker.getTypeOfSymbolAtLocation.gen(member, node));
        return text;
      }() : function* () { return "-"; }(),
      docsG(member));
    return [line(prefix, memberName(member), shownFlags(member), typeText, atLocation, docs), ...calls];
  };
  const enumMemberG = function* (member, prefix) {
    const handle = declarationHandle(member);
    const node = handle ? yield* handle.resolve.gen(project) : undefined;
    const [value, docs] = yield* all(checker.getConstantValue.gen(node), docsG(member));
    return line(prefix, memberName(member), value ?? "-", docs);
  };
  const work = [];
  for (const node of nodes) {
    for (const m of node.members ?? []) work.push({ node, gen: memberG(m, node.prefix), key: "memberLines" });
    for (const m of node.enumMembers ?? []) work.push({ node, gen: enumMemberG(m, node.prefix), key: "enumLines" });
  }
  const results = api.batch(...work.map((w) => w.gen));
  work.forEach((w, i) => (w.node[w.key] ??= []).push(results[i]));

  // The output, depth first.
  const lines = [];
  const emit = (node) => {
    lines.push(line(node.prefix, shownFlags(node.symbol), node.docs));
    if (node.head) lines.push(...node.head);
    for (const memberLines of node.memberLines ?? []) lines.push(...memberLines);
    if (node.enumLines) lines.push(...node.enumLines);
    if (node.tail) lines.push(...node.tail);
    node.children?.forEach(emit);
  };
  for (const m of modules) {
    if (!m.nodes) lines.push(line(m.moduleName, "no module symbol"));
    else m.nodes.forEach(emit);
  }
  return lines;
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
// Every question asked, by method: the requests sent on their own, plus the
// items inside batchRequests (which itself is not a question).
const questions = new Map();
for (const m of methods) if (m !== "batchRequests") questions.set(m, (questions.get(m) ?? 0) + 1);
for (const [m, n] of batched) questions.set(m, (questions.get(m) ?? 0) + n);
const summary = {
  ts: { id: ts.id, name: ts.name, version: ts.version, dialect: ts.dialect, server },
  batch: opts.batch,
  requests: methods.length, lines: lines.length, wallMs,
  clientCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs: Number.isNaN(serverCpu) ? null : serverCpu * 1e3,
  outputSha1: createHash("sha1").update(text).digest("hex"),
  batchCalls, batchedQuestions: [...batched.values()].reduce((a, b) => a + b, 0),
  questions: Object.fromEntries([...questions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  channelStats,
};
if (opts.json) writeFileSync(opts.json, JSON.stringify(summary, null, 2) + "\n");
console.error(`walk: ${ts.name}@${ts.version}${opts.batch ? " --batch" : ""}: ${summary.requests} requests${opts.batch ? ` (${batchCalls} batches of ${summary.batchedQuestions} questions)` : ""}, ${summary.lines} lines, ${wallMs.toFixed(0)} ms, output sha1 ${summary.outputSha1}`);
