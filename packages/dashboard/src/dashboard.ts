import type { Clock } from "@mcops/core/clock";
import { ConfigError, UsageError } from "@mcops/core/errors";
import { toolLogger, type Writer } from "@mcops/core/log";
import type { Paths } from "@mcops/core/paths";
import { passwdFile, readPasswdFile, setPassword } from "./passwd.ts";
import { type DashboardOptions, DEFAULT_LISTEN, parseListen, startDashboard } from "./server.ts";

// What cli.ts needs of core, named here so that the bundle keeps only what the tool uses.
export { systemClock } from "@mcops/core/clock";
export { resolvePaths } from "@mcops/core/paths";

export interface CommandContext {
  paths: Paths;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  stdout: Writer;
  stderr: Writer & { isTTY?: boolean };
}

/** `dashboard`: serves the page until the signal (SIGTERM); refuses to start while no password is set. */
export async function runServe(
  ctx: CommandContext & { signal: AbortSignal },
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
  const dashboard = await startDashboard(ctx, options);
  ctx.stdout.write(`dashboard: listening on ${dashboard.url}\n`);
  if (!ctx.signal.aborted) {
    await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  await dashboard.close();
  return 0;
}

export interface PasswordInput {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  off(event: "end", listener: () => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** The first line of standard input (a pipe, a here-string), at most 4 KiB read. */
function readPiped(stdin: PasswordInput): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      stdin.off("data", onData);
      stdin.off("end", done);
      stdin.pause();
      resolve(text.split(/\r?\n/)[0] ?? "");
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes("\n") || text.length > 4096) done();
    };
    stdin.on("data", onData);
    stdin.on("end", done);
    stdin.resume();
  });
}

/** Asks on the terminal without echoing what is typed. */
function promptHidden(stdin: PasswordInput, stderr: Writer, question: string): Promise<string> {
  stderr.write(question);
  stdin.setRawMode?.(true);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = () => {
      stdin.off("data", onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      stderr.write("\n");
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") {
          finish();
          return resolve(value);
        }
        if (ch === "\u0003") {
          finish();
          return reject(new UsageError("cancelled", { hint: "nothing was changed" }));
        }
        if (ch === "\u007f" || ch === "\b") value = [...value].slice(0, -1).join("");
        else if (ch >= " ") value += ch;
      }
    };
    stdin.on("data", onData);
    stdin.resume();
  });
}

/** `dashboard passwd [--user NAME]`: the password from a prompt (twice) or from standard input. */
export async function runPasswd(
  ctx: CommandContext & { stdin: PasswordInput },
  options: { user: string },
): Promise<number> {
  let password: string;
  if (ctx.stdin.isTTY) {
    password = await promptHidden(ctx.stdin, ctx.stderr, `New dashboard password for ${options.user}: `);
    const again = await promptHidden(ctx.stdin, ctx.stderr, "The same again: ");
    if (again !== password)
      throw new UsageError("the two passwords differ", { hint: "nothing was changed; try again" });
  } else {
    password = await readPiped(ctx.stdin);
    if (password === "") {
      throw new UsageError("no password on standard input", {
        hint: "run it on a terminal to be asked, or pipe the password in: dashboard passwd < file",
      });
    }
  }
  const file = passwdFile(ctx.paths);
  const result = await setPassword(file, options.user, password);
  const logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: "mc-dashboard.log",
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  logger.info(`password ${result === "added" ? "set" : "changed"} for ${options.user}`, { echo: false });
  ctx.stdout.write(`dashboard: password ${result === "added" ? "set" : "changed"} for ${options.user} (${file})\n`);
  return 0;
}
