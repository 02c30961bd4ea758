import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COLOURS, type Paths, systemClock } from "@mcops/core";
import { describe, expect, it } from "vitest";
import { DEFAULT_COLOUR, positionals } from "../src/settings.ts";
import { parseColour, runWebhook, webhookSettings } from "../src/webhook.ts";

describe("parseColour", () => {
  it.each([
    [undefined, COLOURS.info],
    ["5763719", 5763719],
    ["success", COLOURS.success],
    ["Error", COLOURS.error],
    ["#ff8800", 0xff8800],
    ["0x00FF00", 0x00ff00],
    ["0", 0],
    ["16777215", 16777215],
  ])("reads %j as %i", (input, colour) => {
    expect(parseColour(input)).toBe(colour);
  });

  it.each(["16777216", "-1", "red", "#fff", "12.5"])("refuses %j as a usage error", (input) => {
    expect(() => parseColour(input)).toThrowError(expect.objectContaining({ exitCode: 2 }));
  });

  it("is described in --help by the names and the default it reads", () => {
    // settings.ts is read by --help, so it names the colours without loading the notifier that declares them.
    const names = Object.keys(COLOURS).join("|");
    expect(positionals.colour.describe).toBe(
      `decimal RGB, #rrggbb, or ${names} (default ${DEFAULT_COLOUR}, ${COLOURS[DEFAULT_COLOUR]})`,
    );
  });
});

describe("runWebhook --dry-run", () => {
  it("prints the rich message it would send, footer from --footer, and says nothing is configured", async () => {
    const root = mkdtempSync(join(tmpdir(), "mcops-webhook-"));
    const paths: Paths = { configDir: root, logDir: root, stateDir: root, runDir: root };
    let out = "";
    let err = "";
    const ctx = {
      paths,
      env: {},
      clock: systemClock,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
    };
    const code = await runWebhook(ctx, webhookSettings(ctx), {
      title: "Backup done",
      description: "took 42 s",
      colour: "success",
      footer: "play.example.com",
      dryRun: true,
    });
    expect(code).toBe(0);
    const message = JSON.parse(out);
    expect(message).toEqual({
      embeds: [
        {
          title: "Backup done",
          description: "took 42 s",
          color: COLOURS.success,
          footer: { text: "play.example.com" },
          timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      ],
      allowed_mentions: { parse: [] },
    });
    expect(err).toBe("webhook: no webhook is configured, so nothing would be sent\n");
  });

  it("refuses a message with neither title nor text, and leaves an empty title out", async () => {
    const root = mkdtempSync(join(tmpdir(), "mcops-webhook-"));
    const paths: Paths = { configDir: root, logDir: root, stateDir: root, runDir: root };
    let out = "";
    const io = {
      write: (text: string) => {
        out += text;
        return true;
      },
    };
    const ctx = { paths, env: {}, clock: systemClock, stdout: io, stderr: { write: () => true } };
    await expect(runWebhook(ctx, webhookSettings(ctx), { title: "  " })).rejects.toThrowError(
      expect.objectContaining({ exitCode: 2, message: "TITLE and DESCRIPTION are both empty" }),
    );
    expect(await runWebhook(ctx, webhookSettings(ctx), { title: "", description: "- only a list", dryRun: true })).toBe(
      0,
    );
    const embed = JSON.parse(out).embeds[0];
    expect(embed.title).toBeUndefined();
    expect(embed.description).toBe("- only a list");
  });
});
