/** The mcops version, set by tsup's `define` in built executables; "dev" when run from source. */
declare const __MCOPS_VERSION__: string | undefined;

export const VERSION: string = typeof __MCOPS_VERSION__ === "string" ? __MCOPS_VERSION__ : "dev";

export const USER_AGENT = `mcops/${VERSION} (+self-hosted Minecraft server tools)`;
