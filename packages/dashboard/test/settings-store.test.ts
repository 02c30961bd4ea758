import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CATEGORIES, type Category } from "@mcops/core/categories";
import { loadNotifyConfig } from "@mcops/core/config";
import { BusyError, ConfigError, UsageError } from "@mcops/core/errors";
import { resolvePaths } from "@mcops/core/paths";
import { type TempDir, tempDir, toolEnv } from "@mcops/testkit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeError, readSettings, saveSettings } from "../src/settings-store.ts";

const URL_A = "https://discord.com/api/webhooks/123456789012345678/tokenAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const URL_B = "https://discord.com/api/webhooks/123456789012345678/tokenBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
const allOn = () => Object.fromEntries(CATEGORIES.map((c) => [c, true])) as Record<Category, boolean>;

let dir: TempDir;
let env: NodeJS.ProcessEnv;
let file: string;
const paths = () => resolvePaths(env);
beforeEach(() => {
  dir = tempDir("mcops-settings-");
  env = toolEnv(dir.path);
  mkdirSync(env.MCOPS_CONFIG_DIR as string, { recursive: true });
  file = join(env.MCOPS_CONFIG_DIR as string, "webhook.json");
});
afterEach(() => dir.cleanup());

describe("saving webhook.json", () => {
  it("writes the address and every category, mode 600, and the tools read it back", () => {
    const events = { ...allOn(), join: false, death: false };
    const result = saveSettings(file, { version: "none", webhookUrl: ` ${URL_A} `, events });
    expect(result.changes).toEqual(["address set", "join off", "death off"]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ webhook_url: URL_A, events });
    const config = loadNotifyConfig({ paths: paths(), env });
    expect(config).toMatchObject({ webhookUrl: URL_A, source: file, events });
  });

  it("keeps the keys it does not know and an address the form left empty", () => {
    writeFileSync(file, JSON.stringify({ note: "kept", webhook_url: URL_A, extra: { a: [1, 2] }, events: {} }), {
      mode: 0o600,
    });
    const { version } = readSettings(paths(), env);
    saveSettings(file, { version, webhookUrl: "", events: { ...allOn(), backup: false } });
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved).toEqual({
      note: "kept",
      webhook_url: URL_A,
      extra: { a: [1, 2] },
      events: { ...allOn(), backup: false },
    });
    expect(readdirSync(env.MCOPS_CONFIG_DIR as string)).toEqual(["webhook.json"]);
  });

  it("replaces the address, or removes it so that webhook.env counts again", () => {
    saveSettings(file, { version: "none", webhookUrl: URL_A, events: allOn() });
    let s = readSettings(paths(), env);
    expect(saveSettings(file, { version: s.version, webhookUrl: URL_B, events: allOn() }).changes).toEqual([
      "address changed",
    ]);
    s = readSettings(paths(), env);
    expect(s).toMatchObject({ webhookUrl: URL_B, jsonHasUrl: true });
    saveSettings(file, { version: s.version, forgetUrl: true, events: allOn() });
    expect(readSettings(paths(), env)).toMatchObject({ webhookUrl: undefined, jsonHasUrl: false, source: "none" });
  });

  it("refuses an address that is not a webhook address, and the hidden form of one, leaving the file alone", () => {
    saveSettings(file, { version: "none", webhookUrl: URL_A, events: allOn() });
    const before = readFileSync(file, "utf8");
    const { version } = readSettings(paths(), env);
    for (const bad of ["https://example.com/hook", "http://discord.com/api/webhooks/1/x", "not a url"]) {
      expect(() => saveSettings(file, { version, webhookUrl: bad, events: allOn() })).toThrow(UsageError);
    }
    expect(() =>
      saveSettings(file, {
        version,
        webhookUrl: "https://discord.com/api/webhooks/123456789012345678/***",
        events: allOn(),
      }),
    ).toThrow(/hidden form/);
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("takes Discord's webhook hosts only, unless allowed any host, leaving the file alone when it refuses", () => {
    saveSettings(file, { version: "none", webhookUrl: URL_A, events: allOn() });
    const before = readFileSync(file, "utf8");
    const { version } = readSettings(paths(), env);
    const path = "/api/webhooks/123456789012345678/tokenZZZZ";
    const refused = [
      `http://127.0.0.1:8080${path}`,
      `https://127.0.0.1${path}`,
      `https://169.254.169.254${path}`,
      `https://[::1]${path}`,
      `https://evil.example${path}`,
      `https://discord.com.evil.example${path}`,
      `https://evildiscord.com${path}`,
      `https://media.discordapp.com${path}`,
      `https://discord.com.${path}`,
      `https://discord.com:8443${path}`,
      `https://user:pass@discord.com${path}`,
    ];
    for (const address of refused) {
      let thrown: unknown;
      try {
        saveSettings(file, { version, webhookUrl: address, events: allOn() });
      } catch (error) {
        thrown = error;
      }
      expect(thrown, address).toBeInstanceOf(UsageError);
      expect(describeError(thrown)).toBe(
        "the webhook address must be https:// on discord.com or discordapp.com (or their ptb. and canary. sub-domains) (webhook address) — copy it from Discord; to allow any host, start the dashboard with DASHBOARD_ALLOW_ANY_WEBHOOK=1",
      );
    }
    expect(readFileSync(file, "utf8")).toBe(before);

    let current = version;
    const accepted = ["discord.com", "ptb.discord.com", "canary.discord.com", "discordapp.com", "ptb.discordapp.com"]
      .map((host) => `https://${host}${path}`)
      .concat(["https://canary.discordapp.com/api/v10/webhooks/1/t", "https://DISCORD.com:443/api/webhooks/1/t"]);
    for (const address of accepted) {
      saveSettings(file, { version: current, webhookUrl: address, events: allOn() });
      expect(JSON.parse(readFileSync(file, "utf8")).webhook_url, address).toBe(address);
      current = readSettings(paths(), env).version;
    }
    // Allowed any host, core's schema alone decides: https anywhere, http on the loopback address.
    for (const address of [`http://127.0.0.1:8080${path}`, `https://evil.example${path}`]) {
      saveSettings(file, { version: current, webhookUrl: address, events: allOn() }, { allowAnyHost: true });
      expect(JSON.parse(readFileSync(file, "utf8")).webhook_url).toBe(address);
      current = readSettings(paths(), env).version;
    }
    expect(() =>
      saveSettings(
        file,
        { version: current, webhookUrl: `http://evil.example${path}`, events: allOn() },
        {
          allowAnyHost: true,
        },
      ),
    ).toThrow(/must be an https:\/\/ address/);
  });

  it("refuses to overwrite a change made since the page was drawn", () => {
    const { version } = readSettings(paths(), env);
    writeFileSync(file, JSON.stringify({ events: { join: false } }), { mode: 0o600 });
    expect(() => saveSettings(file, { version, events: allOn() })).toThrow(BusyError);
  });

  it("refuses to overwrite a file that is not a JSON object, whose settings it could not keep", () => {
    writeFileSync(file, "{ broken", { mode: 0o600 });
    const { version, problem } = readSettings(paths(), env);
    expect(problem).toMatch(/is not valid JSON/);
    expect(() => saveSettings(file, { version, events: allOn() })).toThrow(ConfigError);
  });

  it("repairs a file others could read: saved at mode 600, and says it was open", () => {
    writeFileSync(file, JSON.stringify({ webhook_url: URL_A }));
    chmodSync(file, 0o644);
    const s = readSettings(paths(), env);
    expect(s.problem).toMatch(/readable by group and others \(mode 644\)/);
    expect(s.events.join).toBe(true);
    const result = saveSettings(file, { version: s.version, events: allOn() });
    expect(result.wasInsecure).toBe(0o644);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readSettings(paths(), env).problem).toBeUndefined();
  });
});

describe("reading the settings", () => {
  it("shows the address the tools use and where it comes from, categories all on without webhook.json", () => {
    writeFileSync(join(env.MCOPS_CONFIG_DIR as string, "webhook.env"), `WEBHOOK_URL=${URL_A}\n`, { mode: 0o600 });
    expect(readSettings(paths(), env)).toEqual({
      file,
      version: "none",
      webhookUrl: URL_A,
      source: join(env.MCOPS_CONFIG_DIR as string, "webhook.env"),
      jsonHasUrl: false,
      events: allOn(),
      problem: undefined,
    });
  });
});
