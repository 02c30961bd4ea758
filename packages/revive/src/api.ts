import type { Clock } from "@mcops/core/clock";
import { JobError } from "@mcops/core/errors";
import { USER_AGENT } from "@mcops/core/version";
import ky, { type KyResponse } from "ky";

/**
 * One JSON request to a vendor API with the rules both vendors document: a bearer token, 429 waited out (DigitalOcean's
 * RateLimit-Reset, Cloudflare's Retry-After) and repeated, 5xx and network errors repeated for reads only (a repeated
 * create could make two droplets), and every other failure turned into one line by the caller's `explain`.
 */
export interface ApiOptions {
  base: string;
  token: string;
  clock: Clock;
  /** Turns a failed answer into the error to throw. */
  explain: (status: number, body: unknown, method: string, path: string) => JobError;
  /** What the API is, for network errors ("DigitalOcean"). */
  name: string;
  attempts?: number;
  /** Longest wait for a rate limit before giving up (default 60 s). */
  maxWaitMs?: number;
}

export type Method = "get" | "post" | "put" | "patch" | "delete";

export function createApi(options: ApiOptions) {
  const { base, token, clock, explain, name } = options;
  const attempts = options.attempts ?? 4;
  const http = ky.create({
    timeout: 30_000,
    retry: 0,
    throwHttpErrors: false,
    headers: { authorization: `Bearer ${token}`, "user-agent": USER_AGENT, accept: "application/json" },
  });

  return async function request<T>(method: Method, path: string, json?: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      let response: KyResponse;
      try {
        response = await http(`${base}${path}`, { method, ...(json === undefined ? {} : { json }) });
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
        if (!last && method === "get") {
          await clock.sleep(500 * 2 ** (attempt - 1));
          continue;
        }
        throw new JobError(`cannot reach ${name} (${cause})`, {
          where: `${method.toUpperCase()} ${base}${path}`,
          hint: "check the network, then run the same command again: it carries on where it stopped",
        });
      }
      const text = await response.text();
      let body: unknown;
      try {
        body = text ? (JSON.parse(text) as unknown) : undefined;
      } catch {
        body = text;
      }
      if (response.ok) return body as T;
      if (response.status === 429 && !last) {
        await clock.sleep(rateLimitWait(response, clock.now(), options.maxWaitMs ?? 60_000));
        continue;
      }
      if (response.status >= 500 && method === "get" && !last) {
        await clock.sleep(500 * 2 ** (attempt - 1));
        continue;
      }
      throw explain(response.status, body, method.toUpperCase(), path);
    }
  };
}

/** How long a 429 says to wait: Retry-After (seconds), else RateLimit-Reset (epoch seconds), else 1 s; bounded. */
export function rateLimitWait(response: Response, now: number, maxMs: number): number {
  const retryAfter = Number(response.headers.get("retry-after"));
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(retryAfter * 1000, maxMs);
  const reset = Number(response.headers.get("ratelimit-reset"));
  if (Number.isFinite(reset) && reset > 0) return Math.min(Math.max(0, reset * 1000 - now), maxMs);
  return 1000;
}
