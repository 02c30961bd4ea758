import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildServerTemplates, isServerTemplate } from "../scripts/gen-death-messages.ts";
import { realLogPath } from "../src/fixtures.ts";
import { parseHeader } from "../src/game-log.ts";
import { createServerMessageMatcher, isServerMessage } from "../src/server-messages.ts";
import { SERVER_TEMPLATES } from "../src/server-templates.generated.ts";
import { FIXTURE_EVENTS } from "./fixture-events.ts";

describe("SERVER_TEMPLATES", () => {
  it("is what scripts/gen-death-messages.ts generates from the installed minecraft-data", () => {
    expect(SERVER_TEMPLATES).toEqual(buildServerTemplates().templates);
  });

  it("holds the backup's save-off, save-all and save-on feedback, old and new", () => {
    for (const message of [
      "Automatic saving is now disabled",
      "Automatic saving is now enabled",
      "Saving the game (this may take a moment!)",
      "Saved the game",
      "Saved the world",
      "Saving is already turned off",
    ]) {
      expect(SERVER_TEMPLATES).toContain(message);
    }
  });

  it("leaves out templates that begin with an argument and have fewer than two words of their own", () => {
    expect(isServerTemplate("%1$s has %2$s %3$s")).toBe(false);
    expect(isServerTemplate("%1$s ms")).toBe(false);
    expect(isServerTemplate("%1$s: %2$s")).toBe(false);
    expect(isServerTemplate("<%1$s> %2$s")).toBe(false);
    expect(isServerTemplate("%1$s has %2$s experience levels")).toBe(true);
    expect(isServerTemplate("Killed %1$s")).toBe(true);
    for (const template of SERVER_TEMPLATES) expect(isServerTemplate(template)).toBe(true);
  });
});

describe("isServerMessage", () => {
  it.each([
    "Automatic saving is now disabled",
    "Saving the game (this may take a moment!)",
    "Saved the game",
    "Gave 64 [Diamond] to Steve",
    "Steve has 12 experience levels",
    "Set the time to 1000",
    "Made Steve a server operator",
  ])("knows %j", (message) => {
    expect(isServerMessage(message)).toBe(true);
  });

  it.each([
    "Automatic saving is now disabled!",
    "Saved the game twice",
    "Steve was devoured by the Cave Dweller",
    "Steve has 12",
    "Steve",
    "",
  ])("does not take %j for one", (message) => {
    expect(isServerMessage(message)).toBe(false);
  });

  it("gives every argument at least one character, and finds the literal parts as far left as they fit", () => {
    const match = createServerMessageMatcher(["A %1$s, %2$s and %3$s", "%1$s x %2$s"]);
    expect(match("A 1, 2 and 3")).toBe(true);
    expect(match("A 1, 2, 3 and 4 and 5")).toBe(true);
    expect(match("A , 2 and 3")).toBe(false);
    expect(match("A 1,  and 3")).toBe(false);
    expect(match("A 1, 2 and ")).toBe(false);
    expect(match("B x C")).toBe(true);
    expect(match("B x ")).toBe(false);
  });

  it("takes linear time on a long message built to make a regular expression backtrack", () => {
    // 200,000 characters: a match that backtracks (quadratic or worse) takes minutes on it, a linear one milliseconds.
    // The bound sits far between the two, so a busy machine's pauses cannot reach it and a backtracking match cannot
    // stay under it.
    const long = `Steve biome entries set between ${", ".repeat(100_000)}x`;
    const started = performance.now();
    expect(isServerMessage(long)).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("takes none of the modded deaths counted in the real logs for a server message", () => {
    for (const [log, events] of Object.entries(FIXTURE_EVENTS)) {
      const lines = readFileSync(realLogPath(log), "utf8").split("\n");
      for (const event of events) {
        if (event.type !== "death") continue;
        const message = parseHeader((lines[event.line - 1] as string).replace(/\r$/, ""))?.message as string;
        expect(isServerMessage(message), message).toBe(false);
      }
    }
  });
});
