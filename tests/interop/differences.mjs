// The allow-list of deliberate differences between spinrpc-server and tsgo.
// Each entry is an item of docs/PROTOCOL.md's "Where spinrpc-server differs
// from tsgo" (an `<a id="KEY">` anchor there); a test case that
// differs names its entry, so a difference nobody wrote down fails, and so
// does an entry whose docs section is gone.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const NOTES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "docs", "PROTOCOL.md");
const notes = readFileSync(NOTES, "utf8");

/** The docs reference of a deliberate difference; throws if the docs do not list it. */
export function deliberateDifference(key) {
  if (!notes.includes(`<a id="${key}"></a>`)) {
    throw new Error(`deliberate difference "${key}" is not listed in docs/PROTOCOL.md (an <a id="${key}"></a> anchor)`);
  }
  return `docs/PROTOCOL.md#${key}`;
}

/** spinrpc-server's words for a message cut at a field boundary after `n` bytes. */
export const eofAtFieldBoundary = (n) =>
  `unexpected EOF: the peer closed the connection after ${n} ${n === 1 ? "byte" : "bytes"} of a message, at a field boundary; the message is incomplete\n`;
