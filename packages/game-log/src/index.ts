export * from "./death-messages.ts";
export * from "./game-log.ts";
export * from "./game-ping.ts";
export * from "./log-follower.ts";
