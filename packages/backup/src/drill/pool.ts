import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { CHECKER, type CheckAnswer, type CheckRequest } from "./check-worker.ts";
import type { RegionResult } from "./region.ts";

/**
 * The checker threads (check-worker.ts), one region file at a time each, as many as the machine has cores. Each runs
 * under a share of the drill's heap limit; a thread that runs out of it (a world built to exhaust memory, or a defect)
 * fails the drill with the file it was on, and the process itself stays well.
 */
export interface PoolOptions {
  /** The script a thread runs: the bundled executable itself, or check-worker-entry.ts from source. */
  entry: URL;
  /** The heap all the threads share, in MiB. */
  memoryMiB: number;
  threads?: number | undefined;
}

/** What one checker thread can hold at most: its heap's share, a region file read whole, an inflated chunk, zlib's. */
const THREAD_MIB = 160;

/**
 * Checker threads for a drill: one per core, but no more than `memoryMiB` holds. The heap limit covers V8's heap
 * only; what a thread holds besides (a region file read whole, up to 32 MiB; a chunk inflated, up to 64 MiB; zlib's
 * own buffers) is bounded per thread, so each thread is counted at THREAD_MIB.
 */
export function threadsFor(memoryMiB: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.floor(memoryMiB / THREAD_MIB)));
}

/** A checker thread ran out of its heap on `file`. */
export class CheckerOutOfMemory extends Error {
  readonly file: string;
  constructor(file: string, memoryMiB: number) {
    super(`the checker ran out of its ${memoryMiB} MiB on ${file}`);
    this.file = file;
  }
}

interface Pending {
  request: Omit<CheckRequest, "id">;
  file: string;
  resolve: (result: RegionResult) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  busy: (Pending & { id: number }) | undefined;
}

/** The thread entry of the code running now: the bundle is its own entry; from source, check-worker-entry.ts. */
export function checkerEntry(): URL {
  const here = new URL(import.meta.url);
  return here.pathname.endsWith(".ts") ? new URL("./check-worker-entry.ts", here) : here;
}

export class CheckerPool {
  readonly #options: PoolOptions;
  readonly #threads: Thread[] = [];
  readonly #queue: Pending[] = [];
  #failed: Error | undefined;
  #nextId = 0;

  constructor(options: PoolOptions) {
    this.#options = options;
    const count = Math.max(1, options.threads ?? availableParallelism());
    const share = Math.max(16, Math.floor(options.memoryMiB / count));
    for (let i = 0; i < count; i++) {
      const worker = new Worker(options.entry, {
        workerData: { role: CHECKER },
        resourceLimits: { maxOldGenerationSizeMb: share, maxYoungGenerationSizeMb: Math.min(32, share / 4) },
        stdout: false,
        stderr: false,
      });
      const thread: Thread = { worker, busy: undefined };
      worker.on("message", (answer: CheckAnswer) => this.#answered(thread, answer));
      worker.on("error", (error: Error & { code?: string }) => this.#died(thread, error));
      worker.on("exit", (code) => this.#died(thread, new Error(`a checker thread ended (exit code ${code})`)));
      this.#threads.push(thread);
    }
  }

  /** Why the threads can take no more work (one died), if so. */
  get failure(): Error | undefined {
    return this.#failed;
  }

  /** How many threads it has. */
  get size(): number {
    return this.#threads.length;
  }

  /** Checks one region file on the next free thread. */
  check(request: Omit<CheckRequest, "id">, file: string): Promise<RegionResult> {
    return new Promise((resolve, reject) => {
      if (this.#failed) return reject(this.#failed);
      this.#queue.push({ request, file, resolve, reject });
      this.#dispatch();
    });
  }

  /** Ends every thread; what is queued or under way is refused. */
  async close(): Promise<void> {
    this.#fail(new Error("the checker was stopped"));
    await Promise.all(this.#threads.map((t) => t.worker.terminate()));
  }

  #dispatch(): void {
    for (const thread of this.#threads) {
      if (thread.busy) continue;
      const next = this.#queue.shift();
      if (!next) return;
      const id = this.#nextId++;
      thread.busy = { ...next, id };
      thread.worker.postMessage({ ...next.request, id } satisfies CheckRequest);
    }
  }

  #answered(thread: Thread, answer: CheckAnswer): void {
    const busy = thread.busy;
    if (!busy || busy.id !== answer.id) return;
    thread.busy = undefined;
    if ("error" in answer) busy.reject(new Error(`checking ${busy.file}: ${answer.error}`));
    else busy.resolve(answer.result);
    this.#dispatch();
  }

  #died(thread: Thread, error: Error & { code?: string }): void {
    if (this.#failed) return;
    const file = thread.busy?.file ?? "no file";
    this.#fail(
      error.code === "ERR_WORKER_OUT_OF_MEMORY"
        ? new CheckerOutOfMemory(file, this.#options.memoryMiB)
        : new Error(`the checker failed on ${file}: ${error.message}`),
    );
    void Promise.all(this.#threads.map((t) => t.worker.terminate()));
  }

  #fail(error: Error): void {
    if (this.#failed) return;
    this.#failed = error;
    for (const thread of this.#threads) {
      thread.busy?.reject(error);
      thread.busy = undefined;
    }
    for (const pending of this.#queue.splice(0)) pending.reject(error);
  }
}
