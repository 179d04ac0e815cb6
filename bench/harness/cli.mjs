// The command lines of the scripts under bench/: Node's util.parseArgs, strict
// (an unknown flag, a missing value or a stray argument is an error), with one
// way to fail: the script's name, what is wrong, its usage, on stderr, exit 2.
// --help (and -h) prints the usage on stdout and exits 0.

import { parseArgs } from "node:util";

/**
 * A script's command line. `name` prefixes every error ("echo_latency: ...");
 * `usage` is printed after an error and for --help.
 */
export function commandLine(name, usage) {
  /** Reports a bad command line and exits 2. */
  const fail = (msg) => {
    console.error(`${name}: ${msg}\n${usage}`);
    process.exit(2);
  };
  return {
    fail,
    /**
     * The values of `options` (util.parseArgs's: { flag: { type, default } })
     * given in `argv`; exits on an error or after --help.
     */
    parse(options, argv = process.argv.slice(2)) {
      let values;
      try {
        ({ values } = parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }));
      } catch (e) {
        fail(e.message);
      }
      if (values.help) {
        console.log(usage);
        process.exit(0);
      }
      delete values.help;
      return values;
    },
    /** A whole number >= `min` given as --flag's string value (undefined stays undefined). */
    count(flag, v, min = 0) {
      if (v === undefined) return undefined;
      if (!/^\d+$/.test(v) || Number(v) < min) fail(`--${flag} wants a whole number${min ? ` from ${min}` : ""}, got ${JSON.stringify(v)}`);
      return Number(v);
    },
  };
}
