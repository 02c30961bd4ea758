import { defineConfig, mergeConfig } from "vitest/config";
import { shared } from "../../vitest.shared.ts";

// The end-to-end tests spend their time waiting on restic, rclone and the stand-ins, not on the CPU: two files at a
// time (vitest's default on a 2-core machine is one) take the package from about 8 minutes to under 5, and leave the
// other packages' tests, which run beside it, the CPU their real-time stand-ins need.
export default mergeConfig(shared, defineConfig({ test: { maxWorkers: 2 } }));
