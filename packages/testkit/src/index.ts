export { type VirtualClock, virtualClock } from "./clock.ts";
export type {
  CloudflareError,
  CloudflareFault,
  CloudflareRequestRecord,
  CloudflareRoute,
  CloudflareStandIn,
  CloudflareStandInOptions,
  CloudflareWrite,
  DnsRecord,
  DnsRecordType,
  TokenStatus,
} from "./cloudflare.ts";
export { CLOUDFLARE_ROUTES, cloudflareError, startCloudflareStandIn } from "./cloudflare.ts";
export type { BodyRead, ContractService, RealExchange, RouteSource } from "./contract.ts";
export {
  bodiesRead,
  loadExchanges,
  missingHeaders,
  pathOf,
  realExchanges,
  routePattern,
  shapeDifferences,
} from "./contract.ts";
export type {
  DigitalOceanFault,
  DigitalOceanRequest,
  DigitalOceanRoute,
  DigitalOceanStandIn,
  DigitalOceanStandInOptions,
} from "./digitalocean.ts";
export { DIGITALOCEAN_ROUTES, digitalOceanError, startDigitalOceanStandIn } from "./digitalocean.ts";
export type {
  DiscordRequestRecord,
  DiscordStandIn,
  DiscordStandInOptions,
  ErrorTree,
  FieldError,
  Pings,
  ReceivedMessage,
  WebhookConfig,
} from "./discord.ts";
export { computePings, DISCORD_ROUTES, describeMessage, startDiscordStandIn, validatePayload } from "./discord.ts";
export type {
  CorruptFault,
  DownloadFault,
  DownloadRequestRecord,
  DownloadRoute,
  DownloadService,
  DownloadStandIn,
  DownloadStandInOptions,
  PaperChannel,
  TruncateFault,
  VanillaType,
} from "./downloads.ts";
export { DOWNLOAD_HOSTS, DOWNLOAD_ROUTES, isDescriptiveUserAgent, startDownloadStandIn } from "./downloads.ts";
export { type GameServer, startGameServer } from "./game.ts";
export {
  fifoWitness,
  GAME_GID,
  GAME_UID,
  type GameUserRun,
  giveToGame,
  type LeaseSwap,
  leaseSwapWorld,
  runAsGameUser,
  type Swap,
  swapForLink,
  waitUntil,
} from "./hostile.ts";
export type {
  DelayFault,
  DropFault,
  Fault,
  RateDecision,
  RateLimitFault,
  RateLimitOptions,
  StatusFault,
  TempDir,
  ToolRun,
} from "./http.ts";
export { FaultQueue, runTool, SlidingWindowLimiter, startTool, tempDir, toolEnv } from "./http.ts";
export type {
  PanelCall,
  PanelCallKind,
  PanelFault,
  PanelRoute,
  PanelServer,
  PanelServerOptions,
  PanelStandIn,
  PanelStandInOptions,
  ServerState,
  ServerStatus,
} from "./panel.ts";
export { PANEL_ROUTES, panelError, startPanelStandIn } from "./panel.ts";
