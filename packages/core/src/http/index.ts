export * from "./game-state.ts";
export * from "./http-client.ts";
export * from "./notifier.ts";
export * from "./panel-client.ts";
export * from "./request.ts";
export * from "./transport.ts";
