/**
 * jar-download's schemas held to the download hosts' real bodies (testkit test/contracts/downloads, copied from
 * PaperMC/fill, PurpurMC/papyrus, FabricMC/fabric-meta and the Minecraft Wiki, addressed to the real hosts). Each row
 * of the table is a route jar-download reads and the schema it reads it with; every real body of that route must
 * pass, so a schema that asks for more than a host sends fails here, with the tool's own line.
 */
import { checkShape } from "@mcops/core/http";
import { bodiesRead, realExchanges } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import {
  fabricGames,
  fabricInstallers,
  fabricLoaders,
  fillBuilds,
  fillError,
  fillProject,
  mojangManifest,
  mojangVersion,
  purpurBuild,
  purpurProject,
  purpurVersion,
} from "../src/sources.ts";

const FILL = "https://fill.papermc.io/v3/projects/{project}";
const PURPUR = "https://api.purpurmc.org/v2/purpur";
const FABRIC = "https://meta.fabricmc.net/v2/versions";

/** The addresses createSource reads, and the schema of each (the failures: only a Fill 404 is read, for its `error`). */
const DOWNLOAD_READS = [
  { name: "fillProject", schema: fillProject, path: FILL, answers: "success" },
  { name: "fillBuilds", schema: fillBuilds, path: `${FILL}/versions/{version}/builds`, answers: "success" },
  { name: "fillError", schema: fillError, path: `${FILL}/versions/{version}/builds`, answers: "failure" },
  { name: "purpurProject", schema: purpurProject, path: PURPUR, answers: "success" },
  { name: "purpurVersion", schema: purpurVersion, path: `${PURPUR}/{version}`, answers: "success" },
  { name: "purpurBuild", schema: purpurBuild, path: `${PURPUR}/{version}/{build}`, answers: "success" },
  {
    name: "mojangManifest",
    schema: mojangManifest,
    path: "https://piston-meta.mojang.com/mc/game/version_manifest_v2.json",
    answers: "success",
  },
  {
    name: "mojangVersion",
    schema: mojangVersion,
    path: "https://piston-meta.mojang.com/v1/packages/{sha1}/{id}.json",
    answers: "success",
  },
  { name: "fabricLoaders", schema: fabricLoaders, path: `${FABRIC}/loader/{game_version}`, answers: "success" },
  { name: "fabricInstallers", schema: fabricInstallers, path: `${FABRIC}/installer`, answers: "success" },
  { name: "fabricGames", schema: fabricGames, path: `${FABRIC}/game`, answers: "success" },
] as const;

describe("jar-download's schemas and the hosts' real answers", () => {
  const reads = DOWNLOAD_READS.map((read) => ({ ...read, method: "GET" }));
  const { cases, unmatched } = bodiesRead(realExchanges("downloads"), reads);

  it("has a real body for every row of the table", () => {
    expect(unmatched).toEqual([]);
  });

  it.each(cases)("%s", (_name, read, real) => {
    const { host, pathname } = new URL(real.request.path);
    const check = () => checkShape(read.schema, real.response.body, { service: host, route: `GET ${pathname}` });
    expect(check, `${real.name} (real answer from ${real.source})`).not.toThrow();
  });
});
