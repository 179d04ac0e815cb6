// The TypeScript 7 API dialects spinrpc speaks: dialects.json, the table the
// C++ build reads too (dialect/generate_dialects.cmake), whose "about" says
// what each field is. Read with readFileSync, not an import attribute, so
// that every Node line the package supports reads it without a warning; no
// addon here (the module hooks' thread reads it too).

import { readFileSync } from "node:fs";

const table = JSON.parse(readFileSync(new URL("./dialects.json", import.meta.url), "utf8"));

/** Every dialect, oldest first: { name, flags, callback_failure, packages, checked, … }. */
export const DIALECTS = Object.freeze(table.dialects.map((d) => Object.freeze(d)));

/** The dialect named `name` ("7.1"); throws for a name the table does not hold. */
export function dialectNamed(name) {
  const found = DIALECTS.find((d) => d.name === name);
  if (!found) throw new Error(`no API dialect ${name} in dialects.json (${DIALECTS.map((d) => d.name).join(", ")})`);
  return found;
}
