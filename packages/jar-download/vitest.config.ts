import { defineConfig, mergeConfig } from "vitest/config";
import { shared } from "../../vitest.shared.ts";

// The end-to-end tests spend their time waiting on dockerd, restic and the stand-ins more than on the CPU: two files at
// a time (vitest's default on a 2-core machine is one), as backup's. The package was the suite's longest (18 of its 20
// minutes in CI), its files one after another.
export default mergeConfig(shared, defineConfig({ test: { globalSetup: ["test/global-setup.ts"], maxWorkers: 2 } }));
