import { ConfigError } from "@mcops/core/errors";
import { PanelError } from "@mcops/core/http";
import { describe, expect, it } from "vitest";
import { panelErrorSummary, pingErrorSummary, webhookFailureWords } from "../src/remote-answer.ts";

/** What the page says of a remote answer: its status and core's own words, never the words of the answer. */
describe("the webhook host's answer on the page", () => {
  it("is the notifier's words for the code with the HTTP status, without what Discord (or another host) said", () => {
    expect(
      webhookFailureWords({
        kind: "token",
        status: 401,
        reason: "the webhook token is not accepted (401 Invalid Webhook Token, code 50027)",
        hint: "copy the webhook address again into webhook.json",
      }),
    ).toBe("the webhook token is not accepted (HTTP 401) — copy the webhook address again into webhook.json");
    expect(
      webhookFailureWords({
        kind: "refused",
        status: 400,
        reason: 'the message was refused (400 {"AccessKeyId": "ASIA-SECRET" — ), code 7: embeds.0: Must be — x)',
        hint: "this is a bug in mcops if it repeats; run with MCOPS_DEBUG=1 and report it",
      }),
    ).toBe(
      "the message was refused (HTTP 400) — this is a bug in mcops if it repeats; run with MCOPS_DEBUG=1 and report it",
    );
  });

  it("keeps the notifier's reasons that are its own words, and points to the log for any other", () => {
    const own = [
      [
        "unreachable",
        "cannot reach the webhook host discord.com (ECONNREFUSED) after 2 tries",
        "check the machine's network and DNS; messages are not queued",
      ],
      [
        "busy",
        "the webhook stayed rate limited (429) after 2 tries",
        "another program may be posting to the same webhook; give mcops its own webhook",
      ],
      [
        "server",
        "the webhook host kept failing (HTTP 502) after 2 tries",
        "Discord may be having an outage; see its status page",
      ],
    ] as const;
    for (const [kind, reason, hint] of own) {
      expect(webhookFailureWords({ kind, reason, hint })).toBe(`${reason} — ${hint}`);
    }
    expect(webhookFailureWords({ kind: "legacy", reason: "instance-id: i-0123456789", hint: "whatever" })).toBe(
      "the post failed; the tool's log says why",
    );
    expect(webhookFailureWords({ kind: "refused", status: 400, reason: "x", hint: "a".repeat(300) })).toBe(
      "the message was refused (HTTP 400)",
    );
  });
});

describe("the panel's answer on the page", () => {
  it("is the client's own words for the answer with the HTTP status, without the panel's code and detail", () => {
    const refused = new PanelError(
      "auth",
      "the panel refused the API key (401 AuthenticationException: SECRET detail)",
      {
        where: "https://panel.example.com server 1a2b3c4d",
        hint: "check CONTROL_KEY",
        status: 401,
        detail: "SECRET detail",
        reason: "the panel refused the API key",
      },
    );
    expect(panelErrorSummary(refused)).toBe(
      "the panel refused the API key (HTTP 401) (https://panel.example.com server 1a2b3c4d) — check CONTROL_KEY",
    );
    const other = new PanelError("panel-error", "the panel answered 418 Teapot: SECRET", {
      status: 418,
      hint: "h",
      reason: "the panel answered",
    });
    expect(panelErrorSummary(other)).toBe("the panel answered (HTTP 418) — h");
    const limited = new PanelError("rate-limited", "the panel is rate limiting this key (429)", {
      status: 429,
      reason: "the panel is rate limiting this key",
      hint: "try again in SECRET seconds",
    });
    expect(panelErrorSummary(limited)).toBe("the panel is rate limiting this key (HTTP 429) — try again in a minute");
  });

  it("says an unreadable answer was unreadable, and keeps core's own errors", () => {
    expect(panelErrorSummary(new SyntaxError(`Unexpected token '<', "<html>SECRET" is not valid JSON`))).toBe(
      "the panel's answer could not be read (not the JSON of its API)",
    );
    expect(
      panelErrorSummary(new PanelError("network", "cannot reach the panel (ECONNREFUSED)", { where: "https://p" })),
    ).toBe("cannot reach the panel (ECONNREFUSED) (https://p)");
    expect(panelErrorSummary(new ConfigError("CONTROL_URL is missing", { where: "backup.env" }))).toBe(
      "CONTROL_URL is missing (backup.env)",
    );
  });
});

describe("the game's answer on the page", () => {
  it("is the ping library's own words, never a quote of what the game sent", () => {
    expect(pingErrorSummary("connect ECONNREFUSED 127.0.0.1:9")).toBe("connect ECONNREFUSED 127.0.0.1:9");
    expect(pingErrorSummary("Server is offline or unreachable")).toBe("Server is offline or unreachable");
    expect(pingErrorSummary("Expected server to send packet type 0x00, received 7")).toBe(
      "Expected server to send packet type 0x00, received 7",
    );
    expect(pingErrorSummary(`Unexpected token 'S', "SECRET" is not valid JSON`)).toBe(
      "its answer is not a Server List Ping status",
    );
  });
});
