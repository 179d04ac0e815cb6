// What the real servers answer differently per API dialect, recorded from
// them (not derived from any document; what node/dialects.json says is
// taken from it, below): the interop suites take every dialect-dependent
// pin from here. Recorded 2026-12-06 against the versions
// in ../versions.mjs: "7.0" from @typescript/native-preview@7.0.0-dev.20260707.2
// and typescript@7.0.2, "7.1" from typescript@7.1.0-beta and
// 7.1.0-dev.20261105.1 (each value the same for both versions of a dialect).
// A server upgrade that changes one of these fails on the real server's side.
//
// Relative --cwd values come back resolved against the server's working
// directory in 7.1: "{run}" stands for it (the directory the case runs in).
//
// What node/dialects.json already says of a dialect (the flags its client
// passes, the transport errors' prefix, batchRequests) is taken from there,
// not written twice: the suites hold those against the real servers, so
// the table spinrpc-server is built from is checked by them too. Every
// dialect in the table needs its recordings here.

import { DIALECTS as TABLE } from "../../../node/dialects.mjs";

// The recordings, by dialect name.
const RECORDED = {
  "7.0": {
    /** initialize's reply, given currentDirectory already as JSON. */
    initialize: (cwdJson) => `{"useCaseSensitiveFileNames":true,"currentDirectory":${cwdJson}}`,
    initializeValue: (cwd) => ({ useCaseSensitiveFileNames: true, currentDirectory: cwd }),
    /** --cwd as given -> currentDirectory (7.0: verbatim). */
    cwd: {
      "/tmp/": "/tmp/", ".": ".", " ": " ", "rel/dir/..": "rel/dir/..", "/nonexistent/x": "/nonexistent/x",
      '/a/<>&"\\é\nb': '/a/<>&"\\é\nb', "\b\f\t\r\x01\x1f\x7f": "\b\f\t\r\x01\x1f\x7f", "\u2028\u2029😀": "\u2028\u2029😀",
      "a/../b": "a/../b", "/srv/data/": "/srv/data/", "//x//y/./z/..": "//x//y/./z/..", "C:\\x": "C:\\x",
      "/a/b/../../..": "/a/b/../../..", "./a/": "./a/", "~": "~", "file:///x": "file:///x", "/": "/",
    },
    /** Without --cwd: $PWD when absolute and naming the working directory, trailing slash kept. */
    pwdSymlinkSlash: (link) => link + "/",
    /** Go %q of U+20C1 and U+1C89 (Unicode 17: unassigned in 7.0's Go tables). */
    unicode17: '"\\u20c1\\u1c89"',
  },
  "7.1": {
    initialize: (cwdJson) => `{"caseSensitivity":1,"currentDirectory":${cwdJson}}`,
    initializeValue: (cwd) => ({ caseSensitivity: 1, currentDirectory: cwd }),
    cwd: {
      "/tmp/": "/tmp", ".": "{run}", " ": "{run}/ ", "rel/dir/..": "{run}/rel", "/nonexistent/x": "/nonexistent/x",
      '/a/<>&"\\é\nb': '/a/<>&"/é\nb', "\b\f\t\r\x01\x1f\x7f": "{run}/\b\f\t\r\x01\x1f\x7f", "\u2028\u2029😀": "{run}/\u2028\u2029😀",
      "a/../b": "{run}/b", "/srv/data/": "/srv/data", "//x//y/./z/..": "//x/y", "C:\\x": "C:/x",
      "/a/b/../../..": "/", "./a/": "{run}/a", "~": "{run}/~", "file:///x": "file:///x", "/": "/",
    },
    pwdSymlinkSlash: (link) => link,
    unicode17: '"\u20c1\u1c89"',
    /** Replies recorded from both 7.1 servers (sync mode: binary results base64). */
    batch: {
      // {"requests":[echo {"a":1}, ping, nope, batchRequests {}, getServerTiming]}
      mixed: '{"responses":[{"method":"echo","result":"eyJhIjoxfQ=="},{"method":"ping","result":"pong"},{"method":"nope","result":null,"error":"api: invalid request: unknown API method \\"nope\\""},{"method":"batchRequests","result":null,"error":"api: invalid request: batchRequests cannot be nested"},{"method":"getServerTiming","result":null,"error":"api: invalid request: unknown API method \\"getServerTiming\\""}]}',
      empty: '{"responses":[]}',
      // {"requests":[echo "aaaa", ping, echo [1,2,3]],"maxResponseBytesPerPage":1}, then the token with no limit
      page1: '{"responses":[{"method":"echo","result":"ImFhYWEi"}],"continuationToken":"api-session-1-1"}',
      page2: '{"responses":[{"method":"ping","result":"pong"},{"method":"echo","result":"WzEsMiwzXQ=="}]}',
      badToken: "api: client error: invalid batch continuation token",
      nested: "api: invalid request: batchRequests cannot be nested",
      paramsPrefix: "api: invalid request: failed to unmarshal *api.BatchRequestsParams: ",
    },
  },
};

export const DIALECTS = Object.fromEntries(TABLE.map((d) => {
  if (!RECORDED[d.name]) throw new Error(`node/dialects.json's dialect ${d.name} has no recordings in goldens/dialects.mjs`);
  return [d.name, {
    ...RECORDED[d.name],
    /** Inserted right after --api on both command lines: what the real client always passes. */
    flags: d.client_flags,
    /** stderr for a CallResponse/CallError with no Call open, and (tsgo) for a Request with an empty method. */
    transportError: `${d.transport_error_prefix}unexpected response message in sync connection\n`,
    /** batchRequests: a method of this dialect or not. */
    batchRequests: d.batch_requests,
  }];
}));

/** The dialect table of a VERSIONS entry. */
export const dialectOf = (v) => {
  const d = DIALECTS[v.dialect];
  if (!d) throw new Error(`no recorded dialect ${v.dialect} for ${v.id}`);
  return d;
};

/** The real server's command line for this version: flags right after --api. */
export const withDialect = (v, args) => (args[0] === "--api" ? ["--api", ...dialectOf(v).flags, ...args.slice(1)] : args);
