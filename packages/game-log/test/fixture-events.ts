/**
 * Events in each real log of ./fixtures/real-logs, counted by reading the files by hand (not with the
 * parser). Every line of every file was read; grep was only used to find candidates, each of which was judged in
 * context. `line` is the 1-based number of the entry's first line, counting "\n" only (the fabric, forge-1.20.1 and
 * spigot files have CRLF or mixed line endings, no file has a bare "\r"; the two codex files have no final newline).
 *
 * Decisions that apply to all files:
 * - join: files that log `<name> joined the game` (all but the Spigot 1.15 one) count that line, never the
 *   `logged in with entity id` line next to it (vanilla/Fabric/Forge log `logged in` first, Paper logs `joined` first).
 *   `UUID of player ...` (User Authenticator threads), `Player X joined with a matching carpet client` (Fabric carpet
 *   mod) and voice-chat `Player X ... connected to voice chat` lines are not joins.
 * - leave: `<name> left the game`. `lost connection` lines are not leaves where `left the game` follows them, and never
 *   for connections that had not logged in (`com.mojang.authlib.GameProfile@...[name=X] (/ip) lost connection`,
 *   `MCScans (/ip) lost connection`). Spigot: see that file.
 * - death: vanilla death messages of players, system messages from the Server thread. `Named entity ... died: ...` and
 *   `Villager ... died, message: '...'` lines are not player deaths; chat (`<X> ...`, `[Not Secure] <X> ...`, Bukkit's
 *   `Async Chat Thread` lines), `[X: ...]` command feedback and `[X] ...` (/say) never are.
 * - start: the `Done (<n>s)! For help, type "help"` line only (Paper's `Done preparing level "world" (14.016s)` is not).
 * - stop: first line of a shutdown. `[Rcon: Stopping the server]` is RCON command feedback; the shutdown is the
 *   `Stopping server` that follows it. A plain `Stopping the server` (console /stop) followed by `Stopping server` is
 *   one shutdown whose first line is `Stopping the server`.
 * - crash: none of the 10 files contains a crash (no `Encountered an unexpected exception`, crash report, watchdog or
 *   `Failed to start the minecraft server`).
 * - error: one per `[Server thread/ERROR]` entry; its untimestamped stack-trace lines belong to it. ERROR lines of
 *   other threads (`main`, `Worker-Main-N`, `TISCM Mapping`, `Server console handler`) are not errors of the main server
 *   thread and are not counted. WARN lines never count.
 */
export interface ExpectedEvent {
  type: "join" | "leave" | "death" | "start" | "stop" | "crash" | "error";
  player?: string;
  line: number;
}

export const FIXTURE_EVENTS: Record<string, ExpectedEvent[]> = {
  "vanilla-1.21.5-dawncraft-2025-03-30-4.log": [
    { type: "start", line: 21 },
    { type: "join", player: "Sandre", line: 26 },
    { type: "join", player: "DevCarlos", line: 28 },
    { type: "leave", player: "DevCarlos", line: 30 },
    { type: "join", player: "DevCarlos", line: 32 },
    { type: "death", player: "Sandre", line: 34 }, // "Sandre was slain by DevCarlos" (PvP, the dying player is Sandre)
    { type: "leave", player: "DevCarlos", line: 36 },
    { type: "join", player: "DevCarlos", line: 38 },
    { type: "leave", player: "DevCarlos", line: 50 },
    { type: "join", player: "DevCarlos", line: 53 },
    { type: "leave", player: "DevCarlos", line: 55 },
    { type: "join", player: "DevCarlos", line: 57 },
    { type: "death", player: "DevCarlos", line: 58 }, // "was doomed to fall by Zombie"
    { type: "leave", player: "DevCarlos", line: 65 },
    { type: "leave", player: "Sandre", line: 67 },
    // line 69 "[Rcon: Stopping the server]" is RCON command feedback; the shutdown starts at 70 "Stopping server".
    { type: "stop", line: 70 },
  ],

  // Chat only (62 lines, e.g. "<Maddi_97> was da los", "<Maddi_97> was los") — none of it is an event.
  "vanilla-1.21.10-maddi97-2025-11-14-3.log": [
    { type: "start", line: 14 },
    { type: "join", player: "Esgro", line: 20 },
    { type: "join", player: "Maddi_97", line: 23 },
    { type: "join", player: "x_Azazel", line: 28 },
    { type: "leave", player: "Maddi_97", line: 32 },
    { type: "leave", player: "x_Azazel", line: 34 },
    { type: "join", player: "Maddi_97", line: 37 },
    { type: "death", player: "Esgro", line: 38 }, // slain by Zombie; line 39 "<Maddi_97> was da los" is chat
    { type: "leave", player: "Maddi_97", line: 44 },
    { type: "join", player: "Maddi_97", line: 47 },
    { type: "death", player: "Esgro", line: 49 }, // blown up by Creeper
    { type: "death", player: "Esgro", line: 50 }, // slain by Zombie; line 51 "<Maddi_97> was los" is chat
    { type: "leave", player: "Maddi_97", line: 67 },
    { type: "join", player: "Maddi_97", line: 70 },
    { type: "leave", player: "Esgro", line: 96 },
    { type: "join", player: "Esgro", line: 99 },
    { type: "death", player: "Maddi_97", line: 100 }, // slain by Zombified Piglin
    { type: "death", player: "Maddi_97", line: 103 }, // slain by Zombified Piglin
    { type: "leave", player: "Esgro", line: 122 },
    { type: "death", player: "Maddi_97", line: 123 }, // blown up by Creeper
    { type: "leave", player: "Maddi_97", line: 128 },
    { type: "join", player: "Maddi_97", line: 131 },
    { type: "death", player: "Maddi_97", line: 132 }, // blown up by Creeper
    { type: "death", player: "Maddi_97", line: 136 }, // slain by Zombified Piglin
    { type: "death", player: "Maddi_97", line: 139 }, // slain by Zombified Piglin
    { type: "death", player: "Maddi_97", line: 140 }, // slain by Zombified Piglin
    { type: "leave", player: "Maddi_97", line: 144 },
    { type: "join", player: "Esgro", line: 147 },
    { type: "leave", player: "Esgro", line: 149 },
  ],

  // Midnight-rolled file: no startup and no shutdown lines. 18 `Villager ... died, message: '...'` lines (7, 8, 50-53,
  // 57-62, 68-70, 75-78, 103, 238, 239, 247) are villager deaths, not player deaths — even "'Villager was slain by
  // Maddi_97'". The ~90 boat "moved too quickly!" lines and line 257 "handleDisconnection() called twice" are WARN.
  "vanilla-1.21.10-maddi97-2025-11-13-1.log": [
    { type: "join", player: "Maddi_97", line: 3 },
    { type: "join", player: "x_Azazel", line: 6 },
    { type: "death", player: "Maddi_97", line: 9 }, // slain by Zombie
    { type: "death", player: "x_Azazel", line: 10 }, // slain by Zombie
    { type: "leave", player: "x_Azazel", line: 12 },
    { type: "join", player: "x_Azazel", line: 15 },
    { type: "leave", player: "Maddi_97", line: 18 },
    { type: "join", player: "Maddi_97", line: 21 },
    { type: "leave", player: "x_Azazel", line: 23 },
    { type: "join", player: "x_Azazel", line: 26 },
    { type: "leave", player: "Maddi_97", line: 28 },
    { type: "join", player: "Maddi_97", line: 31 },
    { type: "leave", player: "Maddi_97", line: 36 },
    { type: "join", player: "Maddi_97", line: 39 },
    { type: "death", player: "Maddi_97", line: 40 }, // "Maddi_97 drowned"
    { type: "leave", player: "Maddi_97", line: 42 },
    { type: "join", player: "Maddi_97", line: 45 },
    { type: "leave", player: "x_Azazel", line: 47 },
    { type: "death", player: "Maddi_97", line: 48 }, // slain by Drowned
    { type: "join", player: "x_Azazel", line: 56 },
    { type: "death", player: "Maddi_97", line: 83 }, // shot by Skeleton
    { type: "leave", player: "x_Azazel", line: 86 },
    { type: "join", player: "x_Azazel", line: 89 },
    { type: "death", player: "x_Azazel", line: 91 }, // slain by Iron Golem
    { type: "leave", player: "x_Azazel", line: 93 },
    { type: "join", player: "x_Azazel", line: 96 },
    { type: "death", player: "Maddi_97", line: 102 }, // hit the ground too hard
    { type: "leave", player: "Maddi_97", line: 209 },
    { type: "join", player: "Maddi_97", line: 213 },
    { type: "leave", player: "Maddi_97", line: 225 },
    { type: "join", player: "Maddi_97", line: 228 },
    { type: "leave", player: "Maddi_97", line: 231 },
    // line 232 "MCScans (/203.0.113.7:42310) lost connection: Disconnected" is a server-list scanner that never
    // logged in (no `left the game` follows): not a leave.
    { type: "leave", player: "x_Azazel", line: 234 },
    { type: "join", player: "Maddi_97", line: 237 },
    { type: "leave", player: "Maddi_97", line: 242 },
    { type: "join", player: "Maddi_97", line: 246 },
    { type: "leave", player: "Maddi_97", line: 250 },
    { type: "join", player: "Maddi_97", line: 253 },
    { type: "leave", player: "Maddi_97", line: 255 },
  ],

  // Paper logs `joined the game` BEFORE `logged in with entity id`; the join is the `joined the game` line.
  // 36 "Named entity EntityIronGolem[...] died: ..." / "Villager EntityVillager[...] died, message: ..." lines (the
  // README says 34; grep finds 36), including "died: Iron Golem (3) was slain by xBOOKx": none is a player death.
  // Chat is on "Async Chat Thread" (506, 518, 519, 533). Line 6 is a Worker-Main-2/ERROR (not the server thread).
  "paper-1.18.1-teerut-2021-12-18-11.log": [
    { type: "error", line: 121 }, // Ambiguous plugin name `OreTools'
    // 122 is "[Server thread/ERROR]: [STDERR] [...CraftLegacy] Initializing Legacy Material Support..." — a plugin's
    // stderr captured at ERROR level by the server thread; it is an ERROR entry of the main thread, so it counts.
    { type: "error", line: 122 },
    { type: "error", line: 178 }, // Fatal error trying to convert FarmTools ... (stack trace 179-203)
    { type: "error", line: 204 }, // (stack 205-230)
    { type: "error", line: 231 }, // (stack 232-258)
    { type: "error", line: 259 }, // (stack 260-284); 285-299 are WARN lines with an inline stack: nothing
    { type: "error", line: 308 }, // Fatal error trying to convert OreTools (stack 309-333)
    { type: "error", line: 335 }, // Fatal error trying to convert TeerutAll (stack 336-360)
    { type: "error", line: 385 }, // [Essentials] You are running an unsupported server version!
    { type: "start", line: 401 },
    { type: "join", player: "xBOOKx", line: 419 },
    { type: "join", player: "Ball56", line: 422 },
    { type: "join", player: "Holilope", line: 425 },
    { type: "death", player: "Ball56", line: 427 }, // slain by Zombie
    { type: "join", player: "oat", line: 443 },
    { type: "join", player: "Mariony46", line: 448 },
    { type: "leave", player: "Ball56", line: 451 },
    { type: "leave", player: "Holilope", line: 454 },
    { type: "join", player: "Holilope", line: 460 },
    { type: "death", player: "oat", line: 462 }, // "oat fell while climbing" (vanilla death.fell.other_climbable)
    { type: "death", player: "Mariony46", line: 463 }, // fell from a high place
    { type: "error", line: 475 }, // Could not pass event PlayerInteractEvent to LightChecker (stack 476-504)
    { type: "leave", player: "Mariony46", line: 538 },
    { type: "leave", player: "oat", line: 540 },
    { type: "leave", player: "Holilope", line: 544 },
    { type: "leave", player: "xBOOKx", line: 546 },
    // 549 "[Rcon: Stopping the server]" is RCON feedback; the shutdown starts at 551 "Stopping server".
    { type: "stop", line: 551 },
  ],

  "paper-1.21.4-szoda-2025-05-24-8.log": [
    { type: "error", line: 72 }, // [Essentials] You are running an unsupported server version!
    // 133 "Done preparing level "world" (14.016s)" is not the start line.
    { type: "start", line: 139 },
    { type: "join", player: "SzodasSzifon", line: 143 }, // Paper: `joined the game` (143) precedes `logged in` (144)
    // 148 "[Rcon: Stopping the server]" is RCON feedback; the shutdown starts at 149 "Stopping server".
    { type: "stop", line: 149 },
    // Disconnected by the shutdown: 168 "lost connection: Server closed" then 169 "left the game" -> leave at 169.
    { type: "leave", player: "SzodasSzifon", line: 169 },
  ],

  // Spigot 1.15.2 never logs `joined the game`: joins are the 16 `<name>[/ip:port] logged in with entity id` lines.
  // Leaves: during play this server never logs `left the game`; a plugin replaces the quit message with a localized
  // "« <name> 離開遊戲" ("left the game" in Chinese) right after `<name> lost connection: ...`. For those the
  // `lost connection` line is the leave (the "« ... 離開遊戲" line next to it is the same leave, not counted again).
  // At shutdown (1377-1384, plugins already disabled) it does log `lost connection: 伺服器已關閉` ("server closed")
  // followed by the vanilla `<name> left the game`; there, as on vanilla, the leave is the `left the game` line.
  // So: one leave per session end — 16 joins, 16 leaves; every player who logged in is accounted for.
  // "Login timed out!" (280, 293, 300) is LoginSecurity kicking a player who had logged in (entity id at 267, 286, 296):
  // a leave. "VIP | sdfgh: ..." / "Owner | Jacoblin2014: ..." lines are chat (Async Chat Thread). 272 "[Jacoblin2014] Hi"
  // is /say. 489/542 "... was kicked for floating too long!" are WARN. 25 `Could not pass event ...` / plugin-load
  // ERROR entries with stack traces are errors of the Server thread.
  "spigot-1.15-hsnu-2020-05-23-2.log": [
    { type: "error", line: 12 }, // Could not load 'plugins\ChatItem-1.3.6.4.jar' (stack 13-18)
    { type: "error", line: 199 }, // ebean.properties not found
    { type: "start", line: 246 },
    { type: "join", player: "Jacoblin2014", line: 262 },
    { type: "join", player: "Verethragna0", line: 267 },
    { type: "join", player: "sdfgh", line: 269 },
    { type: "join", player: "Hyper_Hibiki", line: 278 },
    { type: "leave", player: "Verethragna0", line: 280 }, // lost connection: Login timed out! (281 "« ... 離開遊戲")
    { type: "join", player: "Verethragna0", line: 286 },
    { type: "join", player: "takeka729", line: 289 },
    { type: "leave", player: "Verethragna0", line: 293 }, // lost connection: Login timed out!
    { type: "join", player: "Verethragna0", line: 296 },
    { type: "leave", player: "Verethragna0", line: 300 }, // lost connection: Login timed out!
    { type: "join", player: "Verethragna0", line: 304 },
    { type: "error", line: 311 }, // Could not pass event EntityDeathEvent to BattleMusic v2.5 (stack 312-348)
    { type: "error", line: 353 }, // (stack 354-390)
    { type: "error", line: 393 }, // (stack 394-429)
    { type: "error", line: 434 }, // (stack 435-487)
    { type: "leave", player: "takeka729", line: 490 }, // lost connection: Flying is not enabled on this server
    { type: "join", player: "takeka729", line: 493 },
    { type: "error", line: 494 },
    { type: "leave", player: "takeka729", line: 531 },
    { type: "join", player: "takeka729", line: 534 },
    { type: "leave", player: "takeka729", line: 535 },
    { type: "join", player: "takeka729", line: 538 },
    { type: "leave", player: "Jacoblin2014", line: 543 }, // lost connection: Flying is not enabled on this server
    { type: "join", player: "Jacoblin2014", line: 546 },
    { type: "death", player: "Jacoblin2014", line: 549 }, // slain by Zombie
    { type: "death", player: "takeka729", line: 550 }, // slain by Enderman
    { type: "death", player: "Verethragna0", line: 552 }, // shot by Skeleton
    { type: "error", line: 553 },
    { type: "error", line: 590 },
    { type: "error", line: 627 },
    { type: "error", line: 665 },
    { type: "error", line: 702 },
    { type: "error", line: 739 },
    { type: "error", line: 776 },
    { type: "error", line: 815 },
    { type: "death", player: "Hyper_Hibiki", line: 854 }, // fell from a high place
    { type: "death", player: "takeka729", line: 855 }, // fell from a high place
    { type: "error", line: 858 },
    { type: "error", line: 896 },
    { type: "error", line: 933 },
    { type: "death", player: "Jacoblin2014", line: 977 }, // suffocated in a wall
    { type: "error", line: 997 },
    { type: "error", line: 1034 },
    { type: "error", line: 1071 },
    { type: "error", line: 1108 },
    { type: "death", player: "Jacoblin2014", line: 1148 }, // fell from a high place
    { type: "error", line: 1158 },
    { type: "leave", player: "Verethragna0", line: 1198 },
    { type: "join", player: "Verethragna0", line: 1203 },
    { type: "leave", player: "Verethragna0", line: 1205 },
    { type: "join", player: "Verethragna0", line: 1208 },
    { type: "death", player: "takeka729", line: 1209 }, // drowned
    { type: "death", player: "Verethragna0", line: 1216 }, // blown up by Creeper
    { type: "death", player: "Verethragna0", line: 1221 }, // slain by Zombie Pigman
    { type: "death", player: "Verethragna0", line: 1226 }, // slain by Zombie Pigman
    { type: "death", player: "Verethragna0", line: 1227 }, // slain by Zombie Pigman
    { type: "leave", player: "Verethragna0", line: 1230 },
    { type: "join", player: "Verethragna0", line: 1233 },
    { type: "death", player: "takeka729", line: 1245 }, // fell from a high place
    { type: "death", player: "takeka729", line: 1257 }, // "was killed by [Intentional Game Design]" (bed explosion)
    { type: "death", player: "Verethragna0", line: 1264 }, // tried to swim in lava
    { type: "death", player: "takeka729", line: 1270 }, // tried to swim in lava to escape Skeleton
    { type: "leave", player: "Verethragna0", line: 1271 },
    { type: "join", player: "Verethragna0", line: 1274 },
    { type: "leave", player: "Verethragna0", line: 1275 },
    { type: "error", line: 1279 },
    { type: "death", player: "Hyper_Hibiki", line: 1316 }, // burned to death
    { type: "error", line: 1323 },
    // 1356 "Stopping the server" (console /stop) + 1357 "Stopping server": one shutdown, first line 1356.
    { type: "stop", line: 1356 },
    { type: "leave", player: "sdfgh", line: 1378 }, // 1377 lost connection: 伺服器已關閉, 1378 left the game
    { type: "leave", player: "Jacoblin2014", line: 1380 },
    { type: "leave", player: "takeka729", line: 1382 },
    { type: "leave", player: "Hyper_Hibiki", line: 1384 },
  ],

  // 145 "[TISCM Mapping/ERROR]" and 167 "[Server console handler/ERROR]" (both with stack traces) are not the main
  // server thread: no error. 202/221/271 "Player StenW joined with a matching carpet client" are carpet-mod lines, not
  // joins. StenW is still online when the server stops (no `left the game` for him after 270): no leave is invented.
  "fabric-1.21-5tien-2024-11-21-4.log": [
    { type: "start", line: 194 },
    { type: "join", player: "FireGhest", line: 199 },
    { type: "join", player: "StenW", line: 201 },
    { type: "leave", player: "StenW", line: 211 },
    { type: "join", player: "StenW", line: 220 },
    { type: "leave", player: "FireGhest", line: 225 },
    { type: "join", player: "FireGhest", line: 228 },
    { type: "leave", player: "StenW", line: 231 },
    { type: "leave", player: "FireGhest", line: 234 },
    { type: "join", player: "FireGhest", line: 237 },
    { type: "leave", player: "FireGhest", line: 239 },
    { type: "join", player: "FireGhest", line: 242 },
    { type: "leave", player: "FireGhest", line: 244 },
    { type: "join", player: "FireGhest", line: 247 },
    { type: "leave", player: "FireGhest", line: 249 },
    { type: "join", player: "FireGhest", line: 252 },
    { type: "leave", player: "FireGhest", line: 254 },
    { type: "join", player: "FireGhest", line: 257 },
    { type: "leave", player: "FireGhest", line: 259 },
    { type: "join", player: "FireGhest", line: 262 },
    { type: "leave", player: "FireGhest", line: 264 },
    { type: "join", player: "FireGhest", line: 267 },
    { type: "join", player: "StenW", line: 270 },
    { type: "leave", player: "FireGhest", line: 281 },
    { type: "join", player: "FireGhest", line: 284 },
    { type: "leave", player: "FireGhest", line: 289 },
    { type: "join", player: "FireGhest", line: 292 },
    { type: "leave", player: "FireGhest", line: 299 },
    { type: "join", player: "FireGhest", line: 302 },
    { type: "leave", player: "FireGhest", line: 308 },
    // 311 "Stopping the server" (console /stop) + 312 "Stopping server": one shutdown, first line 311.
    { type: "stop", line: 311 },
  ],

  // Forge 1.20.1 (modpack). All events are on [Server thread/...] with a logger name; joins/leaves/deaths come from
  // [net.minecraft.server.MinecraftServer/]. 161 [main/ERROR] lines (mixin/recipe/loot parsing during mod loading,
  // with stack traces) and Worker-Main ERRORs (288, 1133, 1134) are not the main server thread: no error.
  // 11 "com.mojang.authlib.GameProfile@...[name=X] (/ip) lost connection" lines are login attempts, not leaves.
  // Villager deaths at 1076 and 1136 are not player deaths; "[Not Secure] <X> ..." is chat (e.g. 890 "m chet r har").
  // Deaths by modded mobs ("The Anomaly", "Cave Dweller", "Glutton Fish", ...) use vanilla templates. Lines 979/981
  // "Anonmouse died whilst trying to escape The Spitter" are not a template I know from vanilla; they are Server-thread
  // system messages from the MinecraftServer logger that start with a player online at that moment (Anonmouse joined at
  // 803, left at 999) and are no other event, so they count as Anonmouse's deaths under the Forge rule (flagged below).
  "forge-1.20.1-cavehorror-2025-05-11-3.log": [
    { type: "start", line: 689 }, // Done (2.697s)! via [net.minecraft.server.dedicated.DedicatedServer/]
    { type: "join", player: "Memev0v", line: 702 },
    { type: "join", player: "Anonmouse", line: 709 },
    { type: "join", player: "ThoSanTreEm", line: 719 },
    { type: "join", player: "GrayWolf", line: 729 },
    { type: "leave", player: "ThoSanTreEm", line: 742 },
    { type: "join", player: "ThoSanTreEm", line: 746 },
    { type: "leave", player: "ThoSanTreEm", line: 759 },
    { type: "join", player: "ThoSanTreEm", line: 765 },
    { type: "death", player: "ThoSanTreEm", line: 772 }, // slain by Iron Golem
    { type: "leave", player: "ThoSanTreEm", line: 781 },
    { type: "join", player: "ThoSanTreEm", line: 786 },
    { type: "leave", player: "Anonmouse", line: 796 }, // lost connection: Timed out (795) + left the game (796)
    { type: "death", player: "ThoSanTreEm", line: 799 }, // slain by The Anomaly
    { type: "join", player: "Anonmouse", line: 803 },
    { type: "death", player: "ThoSanTreEm", line: 811 }, // shot by Skeleton
    { type: "death", player: "Memev0v", line: 832 }, // slain by Glutton Fish
    { type: "death", player: "ThoSanTreEm", line: 833 }, // slain by The Anomaly
    { type: "death", player: "Anonmouse", line: 835 }, // slain by The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 836 }, // slain by The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 837 }, // slain by The Anomaly
    { type: "death", player: "Anonmouse", line: 838 }, // slain by The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 839 }, // tried to swim in lava to escape The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 853 }, // slain by The Anomaly
    { type: "death", player: "Anonmouse", line: 859 }, // slain by Cave Dweller
    { type: "death", player: "Anonmouse", line: 861 }, // slain by Betrayed Guzzler
    { type: "death", player: "Anonmouse", line: 862 }, // slain by Betrayed Guzzler
    { type: "death", player: "Memev0v", line: 863 }, // shot by Skeleton
    { type: "death", player: "ThoSanTreEm", line: 868 }, // slain by The Anomaly
    // 869-882: fourteen separate "[Server thread/ERROR] [net.minecraft.Util/]: Invalid entity rotation: NaN,
    // discarding." entries, each with its own timestamp and no stack trace: fourteen errors.
    { type: "error", line: 869 },
    { type: "error", line: 870 },
    { type: "error", line: 871 },
    { type: "error", line: 872 },
    { type: "error", line: 873 },
    { type: "error", line: 874 },
    { type: "error", line: 875 },
    { type: "error", line: 876 },
    { type: "error", line: 877 },
    { type: "error", line: 878 },
    { type: "error", line: 879 },
    { type: "error", line: 880 },
    { type: "error", line: 881 },
    { type: "error", line: 882 },
    { type: "death", player: "GrayWolf", line: 884 }, // "was squished too much" (vanilla entity cramming)
    { type: "death", player: "ThoSanTreEm", line: 901 }, // slain by Cave Dweller
    { type: "death", player: "ThoSanTreEm", line: 921 }, // "ThoSanTreEm died" (vanilla generic)
    { type: "death", player: "ThoSanTreEm", line: 922 }, // slain by Door Knight
    { type: "death", player: "Memev0v", line: 925 }, // slain by Zombie
    { type: "leave", player: "GrayWolf", line: 927 },
    { type: "leave", player: "Memev0v", line: 930 },
    { type: "death", player: "Anonmouse", line: 933 }, // slain by The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 938 }, // tried to swim in lava
    { type: "death", player: "ThoSanTreEm", line: 939 }, // tried to swim in lava
    { type: "death", player: "Anonmouse", line: 940 }, // shot by Missionary
    { type: "death", player: "ThoSanTreEm", line: 956 }, // fell from a high place
    { type: "death", player: "ThoSanTreEm", line: 957 }, // slain by Zombie Clown
    { type: "death", player: "ThoSanTreEm", line: 961 }, // slain by Cave Centipede
    { type: "join", player: "secgay", line: 963 },
    { type: "death", player: "ThoSanTreEm", line: 972 }, // slain by Cave Dweller
    { type: "death", player: "Anonmouse", line: 974 }, // slain by Zombie Villager
    { type: "death", player: "Anonmouse", line: 976 }, // slain by The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 977 }, // tried to swim in lava
    { type: "death", player: "Anonmouse", line: 978 }, // was doomed to fall by Baby Spider
    { type: "death", player: "Anonmouse", line: 979 }, // FORGE RULE: "died whilst trying to escape The Spitter"
    { type: "death", player: "Anonmouse", line: 981 }, // FORGE RULE: "died whilst trying to escape The Spitter"
    { type: "leave", player: "secgay", line: 983 },
    { type: "death", player: "Anonmouse", line: 985 }, // slain by The Anomaly
    { type: "join", player: "secgay", line: 989 },
    { type: "leave", player: "ThoSanTreEm", line: 996 },
    { type: "leave", player: "Anonmouse", line: 999 },
    { type: "leave", player: "secgay", line: 1002 },
    { type: "join", player: "ThoSanTreEm", line: 1005 },
    { type: "join", player: "Anonmouse", line: 1009 },
    { type: "join", player: "secgay", line: 1023 },
    { type: "death", player: "secgay", line: 1030 }, // blown up by Creeper
    { type: "leave", player: "Anonmouse", line: 1036 },
    { type: "join", player: "Anonmouse", line: 1040 },
    { type: "leave", player: "Anonmouse", line: 1047 },
    { type: "death", player: "secgay", line: 1049 }, // withered away whilst fighting Hornet Harbinger
    { type: "join", player: "Anonmouse", line: 1051 },
    { type: "death", player: "secgay", line: 1057 }, // slain by The Anomaly
    { type: "death", player: "secgay", line: 1058 }, // "secgay died"
    { type: "death", player: "secgay", line: 1059 }, // slain by The Anomaly
    { type: "death", player: "secgay", line: 1060 }, // slain by The Anomaly
    { type: "death", player: "Anonmouse", line: 1061 }, // slain by The Anomaly
    { type: "death", player: "ThoSanTreEm", line: 1071 }, // fell from a high place
    { type: "death", player: "secgay", line: 1072 }, // slain by Iron Golem
    { type: "death", player: "secgay", line: 1079 }, // "secgay died"
    { type: "leave", player: "secgay", line: 1085 },
    { type: "join", player: "secgay", line: 1088 },
    { type: "leave", player: "Anonmouse", line: 1106 },
    { type: "leave", player: "ThoSanTreEm", line: 1110 },
    { type: "leave", player: "secgay", line: 1113 }, // lost connection: Timed out (1112) + left the game (1113)
    { type: "join", player: "ThoSanTreEm", line: 1120 },
    { type: "leave", player: "ThoSanTreEm", line: 1124 },
    { type: "join", player: "secgay", line: 1127 },
    { type: "leave", player: "secgay", line: 1138 },
  ],

  // Startup only. [main/WARN] and [LanServerPinger #1/WARN] lines are not events.
  "forge-1.21.3-codex-start.log": [
    { type: "start", line: 48 }, // Done (14.004s)! via [net.minecraft.server.dedicated.DedicatedServer/]
  ],

  // Startup only; lines 1-17 use the short "[16:58:54] [main/INFO]:" prefix, lines 18+ the Forge long prefix.
  "neoforge-1.21.3-codex-start.log": [
    { type: "start", line: 49 }, // Done (17.236s)! via [net.minecraft.server.dedicated.DedicatedServer/]
  ],
};
