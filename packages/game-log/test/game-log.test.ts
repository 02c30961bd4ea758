import { describe, expect, it } from "vitest";
import { GameLogParser, parseGameLog, playersOnline } from "../src/game-log.ts";

const at = (message: string, thread = "Server thread", level = "INFO") => `[12:00:00] [${thread}/${level}]: ${message}`;
const types = (text: string) => parseGameLog(text).map((e) => [e.type, e.player ?? null, e.line]);

describe("GameLogParser", () => {
  it("reads joins, leaves, deaths, start and stop with players, times and lines", () => {
    const log = [
      at('Done (3.512s)! For help, type "help"'),
      at("Steve joined the game"),
      at("Steve was slain by Zombie"),
      at("Steve left the game"),
      at("Stopping the server"),
      at("Stopping server"),
    ].join("\n");
    expect(types(log)).toEqual([
      ["start", null, 1],
      ["join", "Steve", 2],
      ["death", "Steve", 3],
      ["leave", "Steve", 4],
      ["stop", null, 5],
    ]);
    expect(parseGameLog(log)[0]).toMatchObject({
      seconds: 3.512,
      time: "12:00:00",
      message: 'Done (3.512s)! For help, type "help"',
    });
  });

  it("understands Forge's timestamp and logger, a decimal comma, CRLF, ANSI and § colour codes", () => {
    const log = [
      '[11May2025 13:57:36.740] [Server thread/INFO] [net.minecraft.server.dedicated.DedicatedServer/]: Done (22,075s)! For help, type "help"\r',
      "[11May2025 13:58:35.134] [Server thread/INFO] [net.minecraft.server.players.PlayerList/]: \x1b[33mAlex joined the game\x1b[0m\r",
      at("§eNotch§r left the game"),
      "[12:00:01 INFO]: Bob joined the game",
    ].join("\n");
    expect(types(log)).toEqual([
      ["start", null, 1],
      ["join", "Alex", 2],
      ["leave", "Notch", 3],
      ["join", "Bob", 4],
    ]);
    expect(parseGameLog(log)[0]?.seconds).toBe(22.075);
  });

  it("takes Folia's region threads as the main thread, and no other thread", () => {
    expect(
      types(
        [
          at("Steve joined the game", "Region Scheduler Thread #2"),
          at("Alex joined the game", "User Authenticator #1"),
        ].join("\n"),
      ),
    ).toEqual([["join", "Steve", 1]]);
  });

  it("makes one join of a Bukkit login followed by joined the game, and a join of a login alone (Spigot)", () => {
    const vanilla = [
      at("Steve[/203.0.113.7:5000] logged in with entity id 1 at (0.5, 64.0, 0.5)"),
      at("Steve joined the game"),
    ];
    expect(types(vanilla.join("\n"))).toEqual([["join", "Steve", 2]]);
    const spigot = [
      at("Alex[/203.0.113.7:5000] logged in with entity id 2 at ([world]0.5, 64.0, 0.5)"),
      at("Alex left the game"),
    ];
    expect(types(spigot.join("\n"))).toEqual([
      ["join", "Alex", 1],
      ["leave", "Alex", 2],
    ]);
  });

  it("never makes an event of chat, /me, /say or [Not Secure] chat, whatever they imitate", () => {
    const lines = [
      "<Steve> Alex joined the game",
      "<Steve> Alex was slain by Zombie",
      "[Not Secure] <Steve> Alex left the game",
      "* Steve was slain by Zombie",
      "[Server] Stopping server",
      '[Steve] Done (1.0s)! For help, type "help"',
      "<Steve> Encountered an unexpected exception",
    ].map((m) => at(m));
    lines.push(at("Alex joined the game", "Async Chat Thread - #0"));
    expect(types(lines.join("\n"))).toEqual([]);
  });

  it("does not announce named entities' and villagers' deaths, nor WARN spam", () => {
    const log = [
      at(
        "Named entity EntityWolf['Buddy'/123, l='ServerLevel[world]', x=1.5, y=64.0, z=2.5] died: Buddy was slain by Zombie",
      ),
      at(
        "Villager EntityVillager['Villager'/45, l='ServerLevel[world]', x=1.5, y=64.0, z=2.5] died, message: 'Villager was slain by Zombie'",
      ),
      at("Can't keep up! Is the server overloaded? Running 2034ms or 40 ticks behind", "Server thread", "WARN"),
      at("Steve moved too quickly! 12.5,0.0,3.1", "Server thread", "WARN"),
    ].join("\n");
    expect(types(log)).toEqual([]);
  });

  it("counts a modded death message of an online player, but not the game's other messages about them", () => {
    const log = [
      at("Steve joined the game"),
      at("Steve has made the advancement [Diamonds!]"),
      at("Steve issued server command: /home"),
      at("Steve was devoured by the Cave Dweller"),
      at("Nobody was devoured by the Cave Dweller"),
    ].join("\n");
    expect(types(log)).toEqual([
      ["join", "Steve", 1],
      ["death", "Steve", 4],
    ]);
  });

  it("takes none of the server's own messages for a death of a player named like their first word", () => {
    const backup = [
      at("Automatic saving is now disabled"),
      at("Saving the game (this may take a moment!)"),
      at("Saved the game"),
      at("Automatic saving is now enabled"),
    ];
    const log = [
      at("Automatic joined the game"),
      at("Saving joined the game"),
      at("Saved joined the game"),
      at("Gave joined the game"),
      ...backup,
      ...backup,
      at("Gave 64 [Diamond] to Saving"),
      at("Saving has 12 experience levels"),
      at("Saving is not in spectator mode"),
      at("Saving fell into a pit of spikes"),
    ].join("\n");
    expect(types(log)).toEqual([
      ["join", "Automatic", 1],
      ["join", "Saving", 2],
      ["join", "Saved", 3],
      ["join", "Gave", 4],
      ["death", "Saving", 16],
    ]);
  });

  it("takes none of the game's fixed log lines (not from the language files) for a death of a player named like their first word", () => {
    const players = ["Villager", "Named", "Loaded", "Reloading", "Disconnecting", "Server"];
    const log = [
      ...players.map((player) => at(`${player} joined the game`)),
      // A villager's and a named entity's death (vanilla, Paper; real lines from the fixtures' servers).
      at(
        "Villager cyx['Villager'/62065, l='ServerLevel[universe]', x=-2119.90, y=63.23, z=-315.18] died, message: 'Villager was slain by Zombie'",
      ),
      at(
        "Villager EntityVillager['Villager'/5462, uuid='b0eab5a0-01d0-4130-b878-972811bf8870', l='ServerLevel[world]', x=-11.37, y=67.52, z=631.15] died, message: 'Villager was slain by Named'",
      ),
      at(
        "Named entity EntityIronGolem['Iron Golem (2)'/1248, uuid='5e0afa37-82c6-4722-bae8-51e73843fba2', l='ServerLevel[world]', x=-137.30, y=74.00, z=554.70] died: Iron Golem (2) was slain by Zombie",
      ),
      at(
        "Named entity EntityIronGolem['Iron Golem (2)'/10219, l='ServerLevel[world]', x=-137.30, y=74.00, z=556.30] died",
      ),
      // /reload (Paper, Spigot, vanilla's reload of data packs).
      at("Reloading ResourceManager: Default, bukkit"),
      at("Loaded 6 recipes"),
      at("Loaded 1399 advancements"),
      at("Server permissions file permissions.yml is empty, ignoring it"),
      // A login turned away (vanilla before 1.20.2): anybody can make the server write it.
      at("Disconnecting Bob (/203.0.113.7:51234): You are not white-listed on this server!"),
      at(
        "Disconnecting com.mojang.authlib.GameProfile@5e1d2f[id=<null>,name=Bob,properties={},legacy=false] (/203.0.113.7:51234): Took too long to log in",
      ),
      // Their own deaths still are.
      at("Villager was slain by Zombie"),
      at("Named was devoured by the Cave Dweller"),
    ].join("\n");
    expect(types(log)).toEqual([
      ...players.map((player, i) => ["join", player, i + 1]),
      ["death", "Villager", 17],
      ["death", "Named", 18],
    ]);
  });

  it("keeps one stop per shutdown however many Stopping lines it writes, and again after a start", () => {
    const log = [
      at("Stopping the server"),
      at("Stopping server"),
      at("Stopping server"),
      at('Done (1.0s)! For help, type "help"'),
      at("Stopping server"),
    ].join("\n");
    expect(types(log)).toEqual([
      ["stop", null, 1],
      ["start", null, 4],
      ["stop", null, 5],
    ]);
  });

  it("makes one crash of a crash, with its exception and report path", () => {
    const log = [
      at("Encountered an unexpected exception", "Server thread", "ERROR"),
      "net.minecraft.ReportedException: Ticking entity",
      "\tat net.minecraft.server.MinecraftServer.tick(MinecraftServer.java:100)",
      at(
        "This crash report has been saved to: /srv/crash-reports/crash-2026-11-21_06.00.00-server.txt",
        "Server thread",
        "ERROR",
      ),
      at("Considering it to be crashed, server will forcibly shutdown.", "Server Watchdog", "ERROR"),
    ].join("\n");
    expect(parseGameLog(log)).toEqual([
      expect.objectContaining({
        type: "crash",
        line: 1,
        exception: "net.minecraft.ReportedException: Ticking entity",
        report: "/srv/crash-reports/crash-2026-11-21_06.00.00-server.txt",
      }),
    ]);
  });

  it("makes a crash of a watchdog's hang: vanilla's tick that took 60 s, Paper's server that stopped responding", () => {
    const vanilla = [
      at("A single server tick took 60.00 seconds (should be max 0.05)", "Server Watchdog", "ERROR"),
      at("Considering it to be crashed, server will forcibly shutdown.", "Server Watchdog", "ERROR"),
      at("This crash report has been saved to: /srv/crash-reports/crash-1.txt", "Server Watchdog", "ERROR"),
    ].join("\n");
    expect(parseGameLog(vanilla)).toEqual([
      expect.objectContaining({
        type: "crash",
        line: 1,
        message: "A single server tick took 60.00 seconds (should be max 0.05)",
        report: "/srv/crash-reports/crash-1.txt",
      }),
    ]);
    const paper = [
      at("------------------------------", "Paper Watchdog Thread", "ERROR"),
      at("The server has stopped responding! This is (probably) not a Paper bug.", "Paper Watchdog Thread", "ERROR"),
      at(
        "If you see a plugin in the Server thread dump below, then please report it to that author",
        "Paper Watchdog Thread",
        "ERROR",
      ),
      at('Done (1.0s)! For help, type "help"'),
      at("The server has stopped responding! This is (probably) not a Paper bug.", "Paper Watchdog Thread", "ERROR"),
    ].join("\n");
    expect(types(paper)).toEqual([
      ["crash", null, 2],
      ["start", null, 4],
      ["crash", null, 5],
    ]);
    // A player who says it is not the watchdog.
    expect(types(at("<Steve> The server has stopped responding! lol"))).toEqual([]);
  });

  it("makes an error of a main-thread ERROR entry with its stack lines, and nothing of other threads' errors", () => {
    const log = [
      at("Failed to handle packet", "Server thread", "ERROR"),
      "java.lang.IllegalStateException: bad packet",
      "\tat a.b.C(C.java:1)",
      at("Could not pass event", "Worker-Main-2", "ERROR"),
      at("Steve joined the game"),
    ].join("\n");
    const events = parseGameLog(log);
    expect(events.map((e) => e.type)).toEqual(["error", "join"]);
    expect(events[0]).toMatchObject({
      line: 1,
      exception: "java.lang.IllegalStateException: bad packet",
      stack: ["java.lang.IllegalStateException: bad packet", "\tat a.b.C(C.java:1)"],
    });
  });

  it("makes an error of a Folia region thread's ERROR entry too (its region threads are its main threads)", () => {
    const log = [
      at("Could not tick entity", "Region Scheduler Thread #2", "ERROR"),
      "java.lang.NullPointerException: no level",
      at("Steve joined the game", "Region Scheduler Thread #1"),
    ].join("\n");
    const events = parseGameLog(log);
    expect(events.map((e) => e.type)).toEqual(["error", "join"]);
    expect(events[0]).toMatchObject({ exception: "java.lang.NullPointerException: no level" });
  });

  it("keeps track of who is online", () => {
    const parser = new GameLogParser(() => {});
    for (const m of ["Steve joined the game", "Alex joined the game", "Steve left the game"]) parser.push(at(m));
    expect([...parser.online]).toEqual(["Alex"]);
    parser.push(at("Stopping server"));
    expect(parser.online.size).toBe(0);
  });
});

describe("playersOnline", () => {
  it("follows joins and leaves, and empties the server at a start, stop or crash", () => {
    const at = (message: string) => `[12:00:00] [Server thread/INFO]: ${message}\n`;
    const log = [
      at("Steve joined the game"),
      at("Alex joined the game"),
      at("Notch joined the game"),
      at("Alex left the game"),
    ].join("");
    expect(playersOnline(parseGameLog(log)).sort()).toEqual(["Notch", "Steve"]);
    expect(playersOnline(parseGameLog(log + at("Stopping server")))).toEqual([]);
    expect(
      playersOnline(
        parseGameLog(
          log + at("Stopping server") + at('Done (3.5s)! For help, type "help"') + at("Alex joined the game"),
        ),
      ),
    ).toEqual(["Alex"]);
  });
});
