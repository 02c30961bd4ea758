import ky from "ky";
import type { Clock } from "../clock.ts";
import { formatSpan } from "../format.ts";
import { USER_AGENT } from "../version.ts";
import { type Exchange, exchange, POLICIES, RequestFailure, type RequestPolicy, type RetryNotice } from "./request.ts";

/**
 * GET requests to a third-party service the polite way: a descriptive User-Agent, and core's request policy (a GET
 * is idempotent: 408, 429, 5xx and network errors are tried again with backoff, the wait a 429 names (Retry-After,
 * Modrinth's X-RateLimit-Reset) honoured up to the policy's cap; core/request.ts). What is left after the retries is
 * one HttpFailure naming the address and what the service said, or the wait it asked for that was too long.
 */
export interface HttpClientOptions {
  userAgent?: string;
  /** Per try, until the answer's headers (default 30 s); the caller watches a long body for stalls. */
  timeoutMs?: number;
  /** Retries after the first try (default 3). */
  retries?: number;
  /** First backoff; doubles each retry (default 500 ms). */
  retryDelayMs?: number;
  signal?: AbortSignal;
  /** The clock the waits are slept on (default the system's). */
  clock?: Clock;
  /** Told of each pause before another try (a 429's wait, a 5xx's backoff), with the address. */
  onRetry?: (info: RetryNotice & { url: string }) => void;
}

export class HttpFailure extends Error {
  readonly url: string;
  /** undefined: no answer (network error, timeout). */
  readonly status: number | undefined;
  /** The answer's body, cut to 500 characters. */
  readonly body: string;
  /** A 429 (or 503) asked for this wait, longer than the policy sleeps through: the answer was not tried again. */
  readonly waitMs: number | undefined;
  constructor(url: string, status: number | undefined, message: string, body = "", waitMs?: number) {
    super(message);
    this.name = "HttpFailure";
    this.url = url;
    this.status = status;
    this.body = body;
    this.waitMs = waitMs;
  }
}

export interface HttpClient {
  /** The parsed JSON body of a 200 answer; HttpFailure otherwise. */
  json(url: string): Promise<unknown>;
  /** The body as text (for checksums over the exact bytes). */
  text(url: string): Promise<string>;
  /** The answer itself, to stream a large body; HttpFailure for a non-2xx answer. `signal` also aborts this one. */
  get(url: string, options?: { signal?: AbortSignal }): Promise<Response>;
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const policy: RequestPolicy = {
    ...POLICIES.downloads,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.retries !== undefined ? { attempts: options.retries + 1 } : {}),
    ...(options.retryDelayMs !== undefined ? { backoffMs: options.retryDelayMs } : {}),
  };
  const http = ky.create({
    timeout: false,
    retry: 0,
    throwHttpErrors: false,
    headers: { "user-agent": options.userAgent ?? USER_AGENT },
  });

  async function get(url: string, request: { signal?: AbortSignal } = {}): Promise<Response> {
    const signals = [options.signal, request.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    let answer: Exchange<Response>;
    try {
      answer = await exchange(policy, {
        where: url,
        idempotent: true,
        ...(signal ? { signal } : {}),
        ...(options.clock ? { clock: options.clock } : {}),
        ...(options.onRetry ? { onRetry: (info) => options.onRetry?.({ ...info, url }) } : {}),
        send: (trySignal) => http.get(url, { signal: trySignal }),
      });
    } catch (error) {
      if (!(error instanceof RequestFailure)) throw error;
      const message =
        error.kind === "interrupted"
          ? "interrupted"
          : error.kind === "timeout"
            ? `${host(url)} did not answer in time`
            : `cannot reach ${host(url)} (${error.code})`;
      throw new HttpFailure(url, undefined, message);
    }
    const { response, errorText, waitTooLongMs } = answer;
    if (waitTooLongMs !== undefined) {
      // Not slept through (a hang to whoever waits on the command): said, with the wait.
      const message =
        `${host(url)} answered ${response.status} and asks for a wait of ${formatSpan(waitTooLongMs)}, ` +
        `longer than the ${formatSpan(policy.maxWaitMs)} mcops waits`;
      throw new HttpFailure(url, response.status, message, errorText.slice(0, 500), waitTooLongMs);
    }
    if (!response.ok) {
      throw new HttpFailure(url, response.status, `${host(url)} answered ${response.status}`, errorText.slice(0, 500));
    }
    return response;
  }

  return {
    get,
    async json(url) {
      const text = await (await get(url)).text();
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new HttpFailure(url, 200, `${host(url)} answered something that is not JSON`, text.slice(0, 500));
      }
    },
    async text(url) {
      return (await get(url)).text();
    },
  };
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
