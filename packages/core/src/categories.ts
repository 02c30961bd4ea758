/** Event categories (docs/contract.md): the keys of webhook.json `events`, all on when the file is absent. */
export const CATEGORIES = [
  "join",
  "leave",
  "death",
  "start",
  "stop",
  "crash",
  "backup",
  "idle",
  "restart",
  "health",
] as const;
export type Category = (typeof CATEGORIES)[number];
