export * from "./fields.ts";
export * from "./legacy.ts";
export * from "./load.ts";
export * from "./notify.ts";
export * from "./shared.ts";
