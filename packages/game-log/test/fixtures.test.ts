import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REAL_LOGS_DIR } from "../src/fixtures.ts";
import { parseGameLog } from "../src/game-log.ts";
import { FIXTURE_EVENTS } from "./fixture-events.ts";

/** Every real log in fixtures/real-logs: the parser finds exactly the events counted by hand in fixture-events.ts. */
const DIR = REAL_LOGS_DIR;

describe("real server logs", () => {
  it("has a hand count for every fixture", () => {
    expect(Object.keys(FIXTURE_EVENTS).sort()).toEqual(
      readdirSync(DIR)
        .filter((f) => f.endsWith(".log"))
        .sort(),
    );
  });

  it.each(Object.keys(FIXTURE_EVENTS))("%s: exactly the events counted by hand", (file) => {
    const events = parseGameLog(readFileSync(join(DIR, file), "utf8")).map((e) =>
      e.player === undefined ? { type: e.type, line: e.line } : { type: e.type, player: e.player, line: e.line },
    );
    expect(events).toEqual(FIXTURE_EVENTS[file]);
  });
});
