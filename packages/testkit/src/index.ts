export {
  type CachedOffline,
  type StopOrder,
  startUnderCachedOffline,
  stopOrder,
} from "./cached-offline.ts";
export { type VirtualClock, virtualClock } from "./clock.ts";
export type { CloudflareStandIn, CloudflareStandInOptions } from "./cloudflare.ts";
export { CLOUDFLARE_ROUTES, startCloudflareStandIn } from "./cloudflare.ts";
export type { RealExchange, RouteSource } from "./contract.ts";
export { bodiesRead, pathOf, realExchanges, routePattern } from "./contract.ts";
export type { DigitalOceanStandIn, DigitalOceanStandInOptions } from "./digitalocean.ts";
export { DIGITALOCEAN_ROUTES, startDigitalOceanStandIn } from "./digitalocean.ts";
export type { DiscordStandIn, DiscordStandInOptions, ReceivedMessage } from "./discord.ts";
export { computePings, DISCORD_ROUTES, describeMessage, startDiscordStandIn } from "./discord.ts";
export type { DiscordAppStandIn, EditRequest, InteractionAnswer, ReplyEdit, SlashCommand } from "./discord-app.ts";
export { DISCORD_APP_ROUTES, startDiscordAppStandIn } from "./discord-app.ts";
export { statfsWithFree } from "./disk.ts";
export type {
  ContainerBind,
  ContainerCall,
  DockerEvent,
  DockerStandIn,
  DockerStandInOptions,
  EngineVersion,
  ImageConfig,
  PullFault,
  StandInContainer,
  StandInImage,
} from "./docker.ts";
export { DEFAULT_IMAGES, DOCKER_ROUTES, ENGINES, startDockerStandIn, YOLKS_IMAGES } from "./docker.ts";
export type {
  DockerEngine,
  DockerEngineOptions,
  EngineAnswer,
  RealEngine,
  TestImage,
  TestRegistry,
} from "./docker-engine.ts";
export {
  dockerCache,
  dockerEngineUnavailable,
  startDockerEngine,
  startTestRegistry,
  testImages,
} from "./docker-engine.ts";
export type {
  DownloadStandIn,
  DownloadStandInOptions,
  InstallerLoader,
  MavenChecksum,
  ZipEntry,
} from "./downloads.ts";
export {
  DOWNLOAD_HOSTS,
  DOWNLOAD_ROUTES,
  isDescriptiveUserAgent,
  startDownloadStandIn,
  zipFile,
} from "./downloads.ts";
export { type GameServer, startGameServer } from "./game.ts";
export { fifoWitness, giveToGame, leaseSwapWorld, swapForLink, waitUntil } from "./hostile.ts";
export type { TempDir, ToolRun } from "./http.ts";
export { runTool, startTool, tempDir, toolEnv } from "./http.ts";
export type { InstallerBehaviour, TestInstallerOptions } from "./installer.ts";
export { compileTestInstaller, testInstallerJar } from "./installer.ts";
export type {
  ModrinthFileSpec,
  ModrinthProjectSpec,
  ModrinthRequestRecord,
  ModrinthStandIn,
  ModrinthStandInOptions,
  ModrinthVersionSpec,
  MrpackOptions,
  ServedFile,
} from "./modrinth.ts";
export { buildMrpack, MODRINTH_ROUTES, mrpackFile, mrpackIndex, startModrinthStandIn } from "./modrinth.ts";
export { moduleProbe } from "./modules.ts";
export type { PanelCall, PanelStandIn, PanelStandInOptions } from "./panel.ts";
export { DEFAULT_EGG, PANEL_ROUTES, startPanelStandIn } from "./panel.ts";
export { buildRealWorld, type RealLayout, type RealRegion, type RealWorld, realRegions } from "./real-world.ts";
export {
  changeChunkAsGame,
  chunkNbt,
  type GameRead,
  prismarineReadable,
  type RawChunk,
  type RegionReader,
  readChunkAsGame,
  regionChunks,
  saveChunkAsGame,
} from "./region.ts";
export { type ResticPair, resticVersions, resticVersionsPlaces } from "./restic-versions.ts";
export {
  type BuiltWorld,
  buildWorld,
  type Compression,
  compoundBomb,
  compressChunk,
  damage,
  levelDatNbt,
  lz4Blocks,
  type WorldOptions,
} from "./world.ts";
