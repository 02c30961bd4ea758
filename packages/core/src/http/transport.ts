import type { IncomingMessage, RequestOptions } from "node:http";
import { Readable } from "node:stream";
import { USER_AGENT } from "../version.ts";
import type { Answer, AnswerHeaders } from "./request.ts";

/** The headers of an answer that has none to read. */
export const NO_HEADERS: AnswerHeaders = { get: () => null };

export interface SendOptions {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Sent as JSON (content-type application/json). */
  json?: unknown;
  /** JSON already written (a signed body must be sent as it was signed); instead of `json`. */
  body?: string;
  headers?: Record<string, string>;
  /** Ends the request (the per-try timeout, the caller's interruption): it then rejects with the signal's reason. */
  signal: AbortSignal;
}

/** A redirect is followed at most this often, as fetch does (its limit is 20). */
const MAX_REDIRECTS = 20;

/**
 * One HTTP request through node:http(s), for the clients the daemons use (the panel's, the webhook's). Not the global
 * fetch: undici, which Node's fetch is, costs a process about 16 MiB of resident memory the moment Headers, Request or
 * Response is first touched, where node:http costs about 4 (issue 35; the log-tailer and the idle monitor idle for
 * days). The connection is not kept: a daemon asks once a minute or less, and a kept socket the server closed in
 * between would fail the next request.
 *
 * As fetch does: a redirect is followed (303, and 301 or 302 after a POST, become a GET without body; the
 * Authorization header is not sent to another origin; more than 20 fail), a failure to connect rejects with a TypeError
 * whose `cause` is the network's own error (its `code`: ECONNREFUSED, ENOTFOUND, ECONNRESET), an address with a user
 * and password in it is refused, and a body read that the signal ends rejects with the signal's reason.
 */
export async function send(url: string, options: SendOptions): Promise<Answer> {
  let target = address(url);
  let method = options.method.toUpperCase();
  let body = options.body ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
  // Names in lower case, so that a header is replaced or dropped whatever case the caller wrote it in.
  const headers: Record<string, string> = { "user-agent": USER_AGENT };
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  if (body !== undefined) headers["content-type"] = "application/json";
  for (let redirects = 0; ; redirects++) {
    const response = await once(target, method, headers, body, options.signal);
    const location = response.headers.location;
    if (![301, 302, 303, 307, 308].includes(response.statusCode ?? 0) || !location) {
      return answer(response, options.signal);
    }
    // Its body is not wanted, and may never end: the connection goes with it.
    response.destroy();
    if (redirects >= MAX_REDIRECTS) throw failed("redirect count exceeded", "ERR_TOO_MANY_REDIRECTS");
    const next = address(location, target);
    if (next.origin !== target.origin) delete headers.authorization;
    if (
      response.statusCode === 303 ||
      (method === "POST" && response.statusCode !== 307 && response.statusCode !== 308)
    ) {
      method = method === "HEAD" ? "HEAD" : "GET";
      body = undefined;
      delete headers["content-type"];
    }
    target = next;
  }
}

/** A failure as fetch gives it: "fetch failed", its cause carrying the code. */
function failed(message: string, code: string, cause?: unknown): TypeError {
  return new TypeError("fetch failed", { cause: Object.assign(new Error(message, { cause }), { code }) });
}

/**
 * An address to ask, or fetch's failure: not a URL, not HTTP(S), or with a user and password in it (which fetch
 * refuses, and which would then show in every message that names the address).
 */
function address(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch (error) {
    throw failed(`not an address: ${text.slice(0, 200)}`, "ERR_INVALID_URL", error);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw failed(`${url.protocol} is not HTTP`, "EPROTO");
  if (url.username || url.password) throw failed("an address with credentials in it", "ERR_INVALID_URL");
  return url;
}

async function once(
  target: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  // Taken as CommonJS, https only for an https address (TLS costs memory too). An ES import of node:http makes Node
  // copy every export into the module's namespace, and reading its lazy WebSocket, CloseEvent and MessageEvent loads
  // undici: the 16 MiB this module exists to avoid.
  const { request } =
    target.protocol === "https:" ? process.getBuiltinModule("node:https") : process.getBuiltinModule("node:http");
  const sent: Record<string, string> = { ...headers };
  if (body !== undefined) sent["content-length"] = String(Buffer.byteLength(body));
  const requestOptions: RequestOptions = { method, headers: sent, agent: false, signal };
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const req = request(target, requestOptions, resolve);
    req.on("error", (error) =>
      reject(signal.aborted ? signal.reason : new TypeError("fetch failed", { cause: error })),
    );
    req.end(body);
  });
}

/** The answer as the policy reads it; its body is read once, by text() or through `body`. */
function answer(response: IncomingMessage, signal: AbortSignal): Answer {
  const status = response.statusCode ?? 0;
  // Should a body cut off (a reset, the caller's signal) raise 'error' while nobody reads it yet, it must not end the
  // process: whoever reads it later (text(), the stream) gets the failure there.
  response.on("error", () => undefined);
  let stream: ReadableStream<Uint8Array> | undefined;
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get(name) {
        const value = response.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    },
    get body() {
      stream ??= Readable.toWeb(response) as ReadableStream<Uint8Array>;
      return stream;
    },
    async text() {
      const chunks: Buffer[] = [];
      try {
        for await (const chunk of response) chunks.push(chunk as Buffer);
      } catch (error) {
        // As fetch: the signal's reason when it ended the read, else "terminated".
        throw signal.aborted ? signal.reason : new TypeError("terminated", { cause: error });
      }
      return Buffer.concat(chunks).toString("utf8");
    },
  };
}
