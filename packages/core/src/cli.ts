/**
 * The light entry for executables' cli.ts: argument parsing and the exit-code wrapper, without the HTTP client or the
 * schemas, so `--help` starts fast. A tool loads the rest (`@mcops/core`) with a dynamic import once its arguments
 * are parsed; the bundler keeps it in the same file and runs it only then.
 */
export { CATEGORIES, type Category } from "./categories.ts";
export * from "./main.ts";
export * from "./tool.ts";
