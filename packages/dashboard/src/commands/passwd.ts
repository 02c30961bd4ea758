import { JobError, UsageError } from "@mcops/core/errors";
import { toolLogger, type Writer } from "@mcops/core/log";
import { LOG_FILES } from "@mcops/core/log-events";
import type { ToolContext } from "@mcops/core/tool";
import { passwdFile, setPassword } from "../passwd.ts";

type PasswdContext = Pick<ToolContext, "paths" | "env" | "clock" | "stdout" | "stderr" | "stdin" | "signal">;

/** Standard input: a terminal, put in raw mode to ask without echo, or a pipe. */
type PasswordInput = ToolContext["stdin"] & { setRawMode?(mode: boolean): unknown };

/**
 * The first SIGINT or SIGTERM ends a wait for standard input: the run ends with "interrupted by <signal>" and nothing
 * changed, instead of waiting for input that may never come.
 */
const interruption = (signal: AbortSignal) => new JobError(`interrupted by ${String(signal.reason)}`);

/** The first line of standard input (a pipe, a here-string), at most 4 KiB read. */
function readPiped(stdin: PasswordInput, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const stop = () => {
      stdin.off("data", onData);
      stdin.off("end", done);
      signal.removeEventListener("abort", interrupted);
      stdin.pause();
    };
    const done = () => {
      stop();
      resolve(text.split(/\r?\n/)[0] ?? "");
    };
    const interrupted = () => {
      stop();
      reject(interruption(signal));
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes("\n") || text.length > 4096) done();
    };
    if (signal.aborted) return reject(interruption(signal));
    stdin.on("data", onData);
    stdin.on("end", done);
    signal.addEventListener("abort", interrupted, { once: true });
    stdin.resume();
  });
}

/** Asks on the terminal without echoing what is typed. */
function promptHidden(stdin: PasswordInput, stderr: Writer, signal: AbortSignal, question: string): Promise<string> {
  if (signal.aborted) return Promise.reject(interruption(signal));
  stderr.write(question);
  stdin.setRawMode?.(true);
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = () => {
      stdin.off("data", onData);
      signal.removeEventListener("abort", interrupted);
      stdin.setRawMode?.(false);
      stdin.pause();
      stderr.write("\n");
    };
    const interrupted = () => {
      finish();
      reject(interruption(signal));
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
    signal.addEventListener("abort", interrupted, { once: true });
    stdin.resume();
  });
}

/** The new password: asked twice on a terminal, else the first line of standard input. */
async function readNewPassword(ctx: PasswdContext, user: string): Promise<string> {
  const stdin: PasswordInput = ctx.stdin;
  if (stdin.isTTY) {
    const password = await promptHidden(stdin, ctx.stderr, ctx.signal, `New dashboard password for ${user}: `);
    const again = await promptHidden(stdin, ctx.stderr, ctx.signal, "The same again: ");
    if (again !== password)
      throw new UsageError("the two passwords differ", { hint: "nothing was changed; try again" });
    return password;
  }
  const password = await readPiped(stdin, ctx.signal);
  if (password === "") {
    throw new UsageError("no password on standard input", {
      hint: "run it on a terminal to be asked, or pipe the password in: dashboard passwd < file",
    });
  }
  return password;
}

/** `dashboard passwd [--user NAME]`: the password from a prompt (twice) or from standard input. */
export async function runPasswd(ctx: PasswdContext, options: { user: string }): Promise<number> {
  const password = await readNewPassword(ctx, options.user);
  const file = passwdFile(ctx.paths);
  const result = await setPassword(file, options.user, password);
  const logger = toolLogger({
    logDir: ctx.paths.logDir,
    file: LOG_FILES.dashboard,
    stderr: ctx.stderr,
    env: ctx.env,
    clock: ctx.clock,
  });
  logger.info(`password ${result === "added" ? "set" : "changed"} for ${options.user}`, { echo: false });
  ctx.stdout.write(`dashboard: password ${result === "added" ? "set" : "changed"} for ${options.user} (${file})\n`);
  return 0;
}
