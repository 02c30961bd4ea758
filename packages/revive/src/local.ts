import { mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline/promises";
import type { HibernatedDroplet } from "@mcops/cloud/hibernate-steps";
import { envFilePath, type LocalFiles } from "@mcops/cloud/local-env";
import { CATEGORIES, type Category } from "@mcops/core/categories";
import { JobError, UsageError } from "@mcops/core/errors";
import { formatDuration } from "@mcops/core/format";
import { isErrno, writeFileAtomic } from "@mcops/core/fs";
import { createNotifier, type Notifier } from "@mcops/core/http";
import { createLogger } from "@mcops/core/log";
import { resolvePaths } from "@mcops/core/paths";
import type { ToolContext } from "@mcops/core/tool";

/**
 * What revive and hibernate share: the local `.env` (docs/system.md 2.3; `--config`, else MCOPS_ENV_FILE, else ./.env),
 * a state file beside it that remembers the hibernated droplet and a snapshot in progress (so that every step can be
 * re-run), finding the game VM, the confirmation of destructive steps, step timings, and the webhook when .env names
 * one.
 */

/** Answers the confirmation question on a terminal. */
export type Ask = (question: string) => Promise<string>;

/** How often to look and how long each wait may take (tests make them short). */
export interface Waits {
  /** Polling interval (default 5 s). */
  pollMs?: number | undefined;
  timeouts?: Partial<Timeouts> | undefined;
}

/** What revive and hibernate use of the tool's context, with the local .env and the waits. */
export type LocalContext = Pick<ToolContext, "env" | "clock" | "stdout" | "stderr"> & LocalFiles & Waits;

interface Timeouts {
  shutdownMs: number;
  powerOffMs: number;
  snapshotMs: number;
  activeMs: number;
}

const TIMEOUTS: Timeouts = {
  shutdownMs: 3 * 60_000,
  powerOffMs: 2 * 60_000,
  snapshotMs: 90 * 60_000,
  activeMs: 5 * 60_000,
};

export function timeouts(ctx: Waits): Timeouts {
  return { ...TIMEOUTS, ...ctx.timeouts };
}

export function pollMs(ctx: Waits): number {
  return ctx.pollMs ?? 5000;
}

export interface LocalState {
  /** The game VM as it was when hibernated (what revive recreates). */
  droplet?: HibernatedDroplet;
  /** A shutdown asked for (after the game was stopped and backed up) and the droplet not yet known to be off. */
  powerDown?: { dropletId: number; actionId: number; since: string };
  /** A snapshot asked for and not yet known to be done. */
  snapshot?: { dropletId: number; name: string; actionId: number };
  hibernatedAt?: string;
  snapshotId?: string;
  /**
   * A revive not seen to its end: its run id (the tag of the droplet it creates) and a create whose answer was lost.
   * A re-run soon after carries on with them, so the droplet a killed run created is found as its own (issue 30).
   */
  revive?: { runId: string; startedAt: number; lostCreate?: { since: number; tries: number; text: string } };
}

function statePath(ctx: LocalFiles): string {
  return join(dirname(envFilePath(ctx)), ".mcops-state.json");
}

export function readLocalState(ctx: LocalFiles): LocalState {
  try {
    return JSON.parse(readFileSync(statePath(ctx), "utf8")) as LocalState;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return {};
    throw new JobError("the state file is not readable JSON", {
      where: statePath(ctx),
      hint: "move it away; hibernate and revive then work from what DigitalOcean lists",
    });
  }
}

export function writeLocalState(ctx: LocalFiles, state: LocalState): void {
  const file = statePath(ctx);
  mkdirSync(dirname(file), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** Destructive steps: asked on a terminal, `--yes` otherwise. Checked before anything is done. */
export function requireConsent(ctx: { ask?: Ask | undefined }, yes: boolean, what: string): void {
  if (!yes && !ctx.ask) {
    throw new UsageError(`${what} needs confirmation, and this is not a terminal`, { hint: "pass --yes" });
  }
}

export async function confirm(ctx: { ask?: Ask | undefined }, yes: boolean, question: string): Promise<void> {
  if (yes) return;
  const answer = ctx.ask ? await ctx.ask(`${question} Type yes to go on: `) : "";
  if (answer.trim().toLowerCase() !== "yes") {
    throw new JobError("not confirmed: stopped", { hint: "nothing was destroyed; run it again when you are sure" });
  }
}

/** A terminal question through readline, for cli.ts. */
export function terminalAsk(): Ask | undefined {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  return async (question) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  };
}

/** Prints each step as it ends, with how long it took. */
export function steps(ctx: Pick<ToolContext, "clock" | "stdout">) {
  const started = ctx.clock.now();
  let last = started;
  return {
    done(text: string): void {
      const now = ctx.clock.now();
      ctx.stdout.write(`${text} (${formatDuration(now - last)})\n`);
      last = now;
    },
    note(text: string): void {
      ctx.stdout.write(`${text}\n`);
    },
    total(): string {
      return formatDuration(ctx.clock.now() - started);
    },
  };
}

/** The webhook of the local .env, when it has one: hibernate and revive say what they did. */
export function localNotifier(
  ctx: Pick<ToolContext, "env" | "clock" | "stderr"> & LocalFiles,
  env: { WEBHOOK_URL?: string | undefined; SERVER_ADDR: string },
): Notifier | undefined {
  if (!env.WEBHOOK_URL) return undefined;
  const events = Object.fromEntries(CATEGORIES.map((c) => [c, true])) as Record<Category, boolean>;
  return createNotifier({
    config: { webhookUrl: env.WEBHOOK_URL, source: envFilePath(ctx), events, playHost: env.SERVER_ADDR },
    // No log file on the operator's computer: a message that could not be sent is said on stderr, in one line.
    logger: createLogger({ echo: ctx.stderr, echoLevel: "ERROR", clock: ctx.clock }),
    // The posting window is shared through a file; on the operator's computer it lives in the temporary directory.
    paths: resolvePaths({ ...ctx.env, MCOPS_RUN_DIR: ctx.env.MCOPS_RUN_DIR ?? join(tmpdir(), "mcops") }),
    clock: ctx.clock,
  });
}

export type Steps = ReturnType<typeof steps>;
