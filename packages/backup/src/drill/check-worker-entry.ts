import { serveChecks } from "./check-worker.ts";

/** A checker thread's entry when the drill runs from source (tests); the bundled executable is its own entry (cli.ts). */
serveChecks();
