import type { Clock } from "@mcops/core/clock";
import type { JobError } from "@mcops/core/errors";
import { exchange, parseBody, type RequestPolicy } from "@mcops/core/http/request";
import { USER_AGENT } from "@mcops/core/version";
import ky from "ky";
import type * as z from "zod/mini";

/**
 * One JSON request to a vendor API under core's request policy (core/request.ts: 429 waited out from Retry-After,
 * DigitalOcean's RateLimit-Reset once its hour is used up, else a minute for DigitalOcean; 5xx and resets repeated for idempotent requests only, as a repeated create could
 * make two droplets), with a bearer token; the answer's body checked against the schema of what is read from it, and
 * every failed answer turned into one line by the caller's `explain`.
 */
export interface ApiOptions {
  base: string;
  token: string;
  clock: Clock;
  policy: RequestPolicy;
  /**
   * Turns a failed answer into the error to throw; `waitMs`: the wait a 429 asked for that was longer than the
   * policy sleeps through (core's waitTooLongMs), for the message to say.
   */
  explain: (status: number, body: unknown, method: string, path: string, waitMs?: number) => JobError;
}

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** GET reads; PUT and PATCH write the same content again. A POST creates; a DELETE repeated answers 404. */
const IDEMPOTENT: ReadonlySet<Method> = new Set(["get", "put", "patch"]);

export function createApi(options: ApiOptions) {
  const { base, token, clock, explain, policy } = options;
  const http = ky.create({
    timeout: false,
    retry: 0,
    throwHttpErrors: false,
    headers: { authorization: `Bearer ${token}`, "user-agent": USER_AGENT, accept: "application/json" },
  });

  /** The answer's body as `schema` reads it; `schema` undefined: the body is not read (a 204). */
  return async function request<S extends z.ZodMiniType>(
    method: Method,
    path: string,
    schema: S | undefined,
    json?: unknown,
  ): Promise<z.infer<S>> {
    const route = `${method.toUpperCase()} ${path}`;
    const { response, errorText, waitTooLongMs } = await exchange(policy, {
      where: `${method.toUpperCase()} ${base}${path}`,
      idempotent: IDEMPOTENT.has(method),
      clock,
      send: (signal) => http(`${base}${path}`, { method, signal, ...(json === undefined ? {} : { json }) }),
    });
    if (!response.ok) {
      let body: unknown = errorText;
      try {
        body = errorText ? (JSON.parse(errorText) as unknown) : undefined;
      } catch {
        // a proxy's page: explain() says the status
      }
      throw explain(response.status, body, method.toUpperCase(), path, waitTooLongMs);
    }
    const text = await response.text();
    return (schema ? parseBody(schema, text, { service: policy.service, route }) : undefined) as z.infer<S>;
  };
}
