import { ConfigError } from "@mcops/core/errors";
import type { ToolContext } from "@mcops/core/tool";
import { passwdFile, readPasswdFile } from "../passwd.ts";
import { type DashboardOptions, DEFAULT_LISTEN, parseListen, startDashboard } from "../server.ts";
import type { ServeSettings } from "../settings.ts";

/**
 * `dashboard`: serves the page until the signal (SIGTERM); refuses to start while no password is set. `settings` are
 * serveSettings' loaders (settings.ts), called by the page at each request that needs them.
 */
export async function runServe(
  ctx: Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "signal">,
  settings: ServeSettings,
  options: DashboardOptions,
): Promise<number> {
  parseListen(options.listen ?? DEFAULT_LISTEN); // a usage error before any configuration error
  const file = passwdFile(ctx.paths);
  if (!readPasswdFile(file)?.size) {
    throw new ConfigError("no sign-in password is set", {
      where: file,
      hint: "set one with: dashboard passwd (the page is never served without one)",
    });
  }
  const dashboard = await startDashboard(ctx, settings, options);
  ctx.stdout.write(`dashboard: listening on ${dashboard.url}\n`);
  if (!ctx.signal.aborted) {
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  await dashboard.close();
  return 0;
}
