import { describe, expect, it } from "vitest";
import { buildTemplates } from "../scripts/gen-death-messages.ts";
import { createDeathMatcher, matchDeath } from "../src/death-messages.ts";
import { DEATH_TEMPLATES } from "../src/death-templates.generated.ts";

const ARGUMENTS = ["", "Zombie Villager", "[Excalibur of Doom]"];

/** A template with the player and sample arguments filled in. */
function fill(template: string, player: string): string {
  return template.replace(/%(\d+)\$s/g, (_whole, index: string) =>
    index === "1" ? player : (ARGUMENTS[Number(index) - 1] ?? `arg${index}`),
  );
}

describe("DEATH_TEMPLATES", () => {
  it("is what scripts/gen-death-messages.ts generates from the installed minecraft-data", () => {
    const built = buildTemplates();
    expect(built.versions[0]).toBe("1.12");
    expect(DEATH_TEMPLATES).toEqual(built.templates);
  });

  it("holds sorted, unique, normalised templates that begin with the player", () => {
    expect(DEATH_TEMPLATES.length).toBeGreaterThan(100);
    expect([...DEATH_TEMPLATES].sort()).toEqual(DEATH_TEMPLATES);
    expect(new Set(DEATH_TEMPLATES).size).toBe(DEATH_TEMPLATES.length);
    for (const template of DEATH_TEMPLATES) {
      expect(template.startsWith("%1$s ")).toBe(true);
      expect(template.replace(/%\d+\$s/g, "")).not.toContain("%");
    }
  });
});

describe("matchDeath", () => {
  it.each(
    DEATH_TEMPLATES.flatMap((template) =>
      ["Steve", ".BedrockGuy", "*Bedrock", ".Sixteen_Chars_16", "A"].map((player) => [template, player]),
    ),
  )("matches %j filled in for %s", (template, player) => {
    expect(matchDeath(fill(template, player))).toEqual({ player, template });
  });

  it.each([
    ["Steve was slain by Zombie", "Steve", "%1$s was slain by %2$s"],
    ["Alex was shot by Skeleton using Bow", "Alex", "%1$s was shot by %2$s using %3$s"],
    ["Notch fell from a high place", "Notch", "%1$s fell from a high place"],
    [".BedrockGuy drowned", ".BedrockGuy", "%1$s drowned"],
    ["xX_Pro_Xx was killed by [Intentional Game Design]", "xX_Pro_Xx", "%1$s was killed by %2$s"],
    ["Steve was slain by Alex using [Excalibur of Doom]", "Steve", "%1$s was slain by %2$s using %3$s"],
    ["Steve was slain by Alex using [Sword] using [Other]", "Steve", "%1$s was slain by %2$s using %3$s"],
    ["Steve died", "Steve", "%1$s died"],
    ["Steve was killed by Witch using magic", "Steve", "%1$s was killed by %2$s using magic"],
    ["Steve was killed by magic", "Steve", "%1$s was killed by magic"],
    [
      "Steve was killed by [Spiky] while trying to hurt Zombie",
      "Steve",
      "%1$s was killed by %3$s while trying to hurt %2$s",
    ],
    ["Steve was shot by a Wither's skull", "Steve", "%1$s was shot by a %2$s's skull"],
    ["Steve_1234567890 hit the ground too hard", "Steve_1234567890", "%1$s hit the ground too hard"],
  ])("matches %j", (message, player, template) => {
    expect(matchDeath(message)).toEqual({ player, template });
  });

  it.each([
    "Named entity EntityWolf['Buddy'/123, l='ServerLevel[world]', x=1.5, y=64.0, z=2.5] died: Buddy was slain by Zombie",
    "Villager EntityVillager['Villager'/45, ...] died, message: 'Villager was slain by Zombie'",
    "<Steve> I was slain by a zombie lol",
    "[Server] Steve was slain",
    "Steve joined the game",
    "Steve left the game",
    "Steve lost connection: Disconnected",
    'Done (3.5s)! For help, type "help"',
    "Stopping server",
    "Steve has made the advancement [Diamonds!]",
    "",
    "Steve",
    " Steve died",
    "Steve died ",
    "Steve  died",
    "Steve was slain by ",
    "Steve was slain",
    "Steve_12345678901 died",
    ".. died",
    ". died",
    "St-eve died",
    "Steve died\nSteve died",
  ])("does not match %j", (message) => {
    expect(matchDeath(message)).toBeUndefined();
  });
});

describe("createDeathMatcher", () => {
  it("tries the template with more literal text first", () => {
    const match = createDeathMatcher([
      "%1$s was hit by %2$s",
      "%1$s was hit by %2$s with %3$s",
      "%1$s was hit by a %2$s",
    ]);
    expect(match("Steve was hit by Alex")?.template).toBe("%1$s was hit by %2$s");
    expect(match("Steve was hit by Alex with Stick")?.template).toBe("%1$s was hit by %2$s with %3$s");
    expect(match("Steve was hit by a Stick")?.template).toBe("%1$s was hit by a %2$s");
  });

  it("handles templates whose second word is an argument and literals that look like regex syntax", () => {
    const match = createDeathMatcher(["%1$s %2$s (died).*", "%1$s was $1 [killed]"]);
    expect(match("Steve quietly (died).*")).toEqual({ player: "Steve", template: "%1$s %2$s (died).*" });
    expect(match("Steve quietly diedxx")).toBeUndefined();
    expect(match("Steve was $1 [killed]")).toEqual({ player: "Steve", template: "%1$s was $1 [killed]" });
    expect(match("Steve was $1 k")).toBeUndefined();
  });

  it("rejects templates that do not begin with the player", () => {
    expect(() => createDeathMatcher(["Intentional Game Design"])).toThrow(/does not begin/);
  });
});
