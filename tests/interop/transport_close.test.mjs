// createTransport() (node/transport.mjs) against the 7.1 nightly's own
// client, whose channel is the transport its `new API({})` uses: a
// transport closed before its first request throws what the nightly's own
// channel throws there ("SyncRpcChannel is closed") and never starts a
// server; an option of the wrong kind, or a server path where nothing can
// be run, is refused by createTransport() itself, before any request.
// docs/NODE.md, "createTransport".

import { describe, test, after } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "./peers.mjs";
import { VERSIONS } from "./versions.mjs";

const nightly = VERSIONS.find((ts) => ts.transport !== null);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "spinrpc-transport-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

// Imported before any test is declared: node:test runs the declared ones
// while this module is still awaiting.
const { createTransport } = await import(pathToFileURL(join(REPO_ROOT, "node", "index.mjs")).href);
const { API } = nightly ? await import(nightly.sync) : {};
const { SyncRpcChannel: OwnChannel } = nightly ? await import(pathToFileURL(nightly.channel).href) : {};

/** The error `fn` throws (it must throw). */
function thrown(fn) {
  try {
    fn();
  } catch (error) {
    return error;
  }
  assert.fail("did not throw");
}

// A server that leaves a mark when it starts, then is the nightly's own.
function markingServer(name) {
  const mark = join(scratch, `${name}.started`);
  const script = join(scratch, `${name}.sh`);
  writeFileSync(script, `#!/bin/sh\n: > ${JSON.stringify(mark)}\nexec ${JSON.stringify(nightly.server)} "$@"\n`, { mode: 0o755 });
  return { script, started: () => existsSync(mark) };
}

if (nightly) {
  describe(`createTransport() as ${nightly.name}@${nightly.version}'s own channel`, () => {
    test("closed before its first request: every request throws the nightly's own error, and no server starts", () => {
      const own = new OwnChannel(nightly.server, ["--api", "--cwd", scratch]);
      own.close();
      const ownError = thrown(() => own.requestSync("echo", "x"));

      const server = markingServer("closed-first");
      const transport = createTransport({ cwd: scratch, typescript: nightly.dir, tsserverPath: server.script });
      transport.close();
      for (const request of [() => transport.requestSync("echo", "x"), () => transport.requestBinarySync("echo", new Uint8Array(1))]) {
        const error = thrown(request);
        assert.equal(error.constructor, ownError.constructor);
        assert.equal(error.message, ownError.message);
      }
      assert.equal(transport.channel, null);
      assert.equal(server.started(), false);
      transport.close();  // again: nothing
    });

    test("closed after its first request: the same error, and the server was started once", () => {
      const own = new OwnChannel(nightly.server, ["--api", "--cwd", scratch]);
      own.close();
      const ownError = thrown(() => own.requestSync("echo", "x"));

      const transport = createTransport({ cwd: scratch, typescript: nightly.dir });
      const api = new API({ transport });
      assert.equal(api.client.echo("x"), "x");
      const pid = transport.channel.pid;
      api.close();
      transport.close();
      assert.equal(thrown(() => transport.requestSync("echo", "x")).message, ownError.message);
      assert.notEqual(pid, -1);
      assert.equal(transport.channel.pid, -1);
    });

    test("an option of the wrong kind is a TypeError from createTransport() itself", () => {
      const cases = [
        [{ cwd: 42 }, /^createTransport: option cwd must be a string, got number$/],
        [{ cwd: null }, /^createTransport: option cwd must be a string, got null$/],
        [{ tsserverPath: 7 }, /^createTransport: option tsserverPath must be a non-empty string, got number$/],
        [{ tsserverPath: "" }, /^createTransport: option tsserverPath must be a non-empty string, got string$/],
        [{ typescript: 1 }, /^createTransport: option typescript must be a folder/],
        [{ useCaseSensitiveFileNames: "yes" }, /^createTransport: option useCaseSensitiveFileNames must be a boolean, got string$/],
        [{ runExternalCode: 1 }, /^createTransport: option runExternalCode must be a boolean, got number$/],
        [{ collectTiming: "true" }, /^createTransport: option collectTiming must be a boolean, got string$/],
        // The channel's options, refused as the channel refuses them.
        [{ spinUs: -1 }, /option spinUs must be a non-negative integer/],
        [{ placement: "bogus" }, /option placement must be "auto", "off" or "occupy"/],
        [{ sharedMemory: "no" }, /option sharedMemory must be a boolean/],
        [{ bogus: true }, /unknown option bogus/],
        [{ env: { A: "x\u0000y" } }, /options\.env\['A'\]/],
      ];
      for (const [options, message] of cases) {
        const server = markingServer("typed");
        const error = thrown(() => createTransport({ typescript: nightly.dir, tsserverPath: server.script, ...options }));
        assert.ok(error instanceof TypeError, `${JSON.stringify(options)}: ${error}`);
        assert.match(error.message, message, JSON.stringify(options));
        assert.equal(server.started(), false);
      }
    });

    test("a server path where nothing can be run is an Error with its errno's code, naming the path", () => {
      const missing = join(scratch, "no-such-dir", "tsgo");
      const error = thrown(() => createTransport({ cwd: scratch, typescript: nightly.dir, tsserverPath: missing }));
      assert.equal(error.code, "ENOENT");
      assert.equal(error.path, missing);
      assert.equal(error.message, `createTransport: the server ${missing} does not exist`);

      const notExecutable = join(scratch, "not-executable");
      writeFileSync(notExecutable, "#!/bin/sh\n");
      chmodSync(notExecutable, 0o644);
      // No execute bit at all: EACCES for root too (access(2)).
      const denied = thrown(() => createTransport({ cwd: scratch, typescript: nightly.dir, tsserverPath: notExecutable }));
      assert.equal(denied.code, "EACCES");
      assert.equal(denied.path, notExecutable);
    });
  });
}
