import { defineConfig, mergeConfig } from "vitest/config";
import { shared } from "../../vitest.shared.ts";

// The end-to-end tests spend their time waiting on restic, rclone and the stand-ins, not on the CPU: three files at a
// time take the package from about 8 minutes to about 3 on a 2-core machine (vitest's default there is one).
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: 3 } }));
