import { parentPort } from "node:worker_threads";
import { checkRegionFile, openRegularAt, type RegionJob, type RegionResult } from "./region.ts";

/**
 * The drill's checker threads: each takes one region file at a time, by descriptor (threads share the process's open
 * files, so the file is the one the main thread opened without following a link), reads it, inflates and walks its
 * chunks, and answers with what it found. The main thread starts them with a heap limit (resourceLimits): whatever a
 * world holds, a thread that runs out of it ends alone and the drill says which file it was on.
 */
export interface CheckRequest extends RegionJob {
  id: number;
  /** The region file, open for reading. */
  fd: number;
  size: number;
  /** Its directory, open: external chunks (`c.<x>.<z>.mcc`) are opened from it without following a link. */
  dirFd: number;
}

export type CheckAnswer = { id: number; result: RegionResult } | { id: number; error: string };

/** The marker in workerData that makes a thread of the bundled executable a checker instead of a second CLI. */
export const CHECKER = "mcops-drill-checker";

/** Answers check requests on this worker thread's port until the main thread ends the thread. */
export function serveChecks(): void {
  const port = parentPort;
  if (!port) throw new Error("serveChecks runs on a worker thread");
  port.on("message", (request: CheckRequest) => {
    let answer: CheckAnswer;
    try {
      const result = checkRegionFile(request.fd, request.size, request, (name) => openRegularAt(request.dirFd, name));
      answer = { id: request.id, result };
    } catch (error) {
      answer = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer);
  });
}
