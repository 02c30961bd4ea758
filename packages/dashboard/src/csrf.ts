import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * Cross-site request forgery, twice over (OWASP's signed double-submit cookie plus origin verification):
 * 1. Every form carries a token that is the HMAC, under a secret drawn when the server starts, of the signed-in user
 *    and a random per-browser session id kept in an HttpOnly, SameSite=Strict cookie. Another site can make the
 *    browser send the cookie (same site, another port) but cannot read the page to learn the token.
 * 2. A form post must name this host in Origin (or, when a browser sends none, in Referer).
 * A restart draws a new secret, so a page opened before it asks to be loaded again.
 */
const SESSION_COOKIE = "mcops_dashboard";
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export function createCsrf(secret: Buffer) {
  const tokenFor = (session: string, user: string) =>
    createHmac("sha256", secret).update(`csrf\n${user}\n${session}`).digest("base64url");
  return {
    newSession: () => randomBytes(32).toString("base64url"),
    tokenFor,
    verify(session: string | undefined, user: string, token: string | undefined): boolean {
      if (!session || !SESSION_ID.test(session) || !token) return false;
      const want = Buffer.from(tokenFor(session, user));
      const got = Buffer.from(token);
      return got.length === want.length && timingSafeEqual(got, want);
    },
  };
}

/** The session id from the Cookie header, when it is well formed. */
export function sessionFrom(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, value] = part.trim().split("=", 2);
    if (name === SESSION_COOKIE && value && SESSION_ID.test(value)) return value;
  }
  return undefined;
}

/** The Set-Cookie value of a session; Secure when the page was reached over https (the proxy says so). */
export function sessionCookie(session: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${session}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** undefined when the post comes from a page of this host; else why not. */
export function crossOriginReason(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  if (!host) return "no Host header";
  const origin = req.headers.origin;
  const referer = req.headers.referer;
  const from = origin ?? referer;
  if (from === undefined) return "neither Origin nor Referer was sent";
  if (from === "null") return "Origin is null (a sandboxed or local page)";
  let sender: string;
  try {
    sender = new URL(from).host;
  } catch {
    return `${origin === undefined ? "Referer" : "Origin"} is not an address`;
  }
  return sender.toLowerCase() === host.toLowerCase() ? undefined : `sent from ${sender}, not ${host}`;
}
