export * from "./fields.ts";
export * from "./load.ts";
export * from "./notify.ts";
export * from "./shared.ts";
