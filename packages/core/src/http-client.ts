import ky, { HTTPError, type KyResponse, TimeoutError } from "ky";
import { USER_AGENT } from "./version.ts";

/**
 * GET requests to a third-party service the polite way: a descriptive User-Agent, a timeout, and retries where
 * repeating is harmless (a GET): 408, 429, 5xx and network errors, with exponential backoff, honouring Retry-After
 * on 429 and 503. What is left after the retries is one HttpFailure naming the address and what the service said.
 */
export interface HttpClientOptions {
  userAgent?: string;
  /** Per request (default 30 s); a stalled body read is cut after the same time without data. */
  timeoutMs?: number;
  /** Retries after the first try (default 3). */
  retries?: number;
  /** First backoff; doubles each retry (default 500 ms). */
  retryDelayMs?: number;
  signal?: AbortSignal;
}

export class HttpFailure extends Error {
  readonly url: string;
  /** undefined: no answer (network error, timeout). */
  readonly status: number | undefined;
  /** The answer's body, cut to 500 characters. */
  readonly body: string;
  constructor(url: string, status: number | undefined, message: string, body = "") {
    super(message);
    this.name = "HttpFailure";
    this.url = url;
    this.status = status;
    this.body = body;
  }
}

export interface HttpClient {
  /** The parsed JSON body of a 200 answer; HttpFailure otherwise. */
  json(url: string): Promise<unknown>;
  /** The body as text (for checksums over the exact bytes). */
  text(url: string): Promise<string>;
  /** The answer itself, to stream a large body; HttpFailure for a non-2xx answer. `signal` also aborts this one. */
  get(url: string, options?: { signal?: AbortSignal }): Promise<KyResponse>;
}

const RETRY_STATUS = [408, 429, 500, 502, 503, 504];

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const retryDelayMs = options.retryDelayMs ?? 500;
  const http = ky.create({
    timeout: options.timeoutMs ?? 30_000,
    headers: { "user-agent": options.userAgent ?? USER_AGENT },
    retry: {
      limit: options.retries ?? 3,
      methods: ["get"],
      statusCodes: RETRY_STATUS,
      afterStatusCodes: [429, 503],
      maxRetryAfter: 120_000,
      delay: (attempt) => retryDelayMs * 2 ** (attempt - 1),
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });

  async function get(url: string, request: { signal?: AbortSignal } = {}): Promise<KyResponse> {
    const signals = [options.signal, request.signal].filter((s): s is AbortSignal => s !== undefined);
    try {
      return await http.get(url, signals.length > 1 ? { signal: AbortSignal.any(signals) } : request);
    } catch (error) {
      throw await toFailure(url, error);
    }
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

async function toFailure(url: string, error: unknown): Promise<HttpFailure> {
  if (error instanceof HTTPError) {
    const body = (await error.response.text().catch(() => "")).slice(0, 500);
    return new HttpFailure(url, error.response.status, `${host(url)} answered ${error.response.status}`, body);
  }
  if (error instanceof TimeoutError) return new HttpFailure(url, undefined, `${host(url)} did not answer in time`);
  if ((error as Error).name === "AbortError") return new HttpFailure(url, undefined, "interrupted");
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return new HttpFailure(
    url,
    undefined,
    `cannot reach ${host(url)} (${cause?.code ?? cause?.message ?? (error as Error).message})`,
  );
}
