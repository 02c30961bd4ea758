import { describe, expect, it } from "vitest";
import { imageParts } from "../src/image-ref.ts";

describe("imageParts", () => {
  it.each([
    ["ghcr.io/pterodactyl/yolks:java_21", { repository: "ghcr.io/pterodactyl/yolks", tag: "java_21" }],
    ["localhost:5000/yolks:java_21", { repository: "localhost:5000/yolks", tag: "java_21" }],
    ["localhost:5000/yolks", { repository: "localhost:5000/yolks" }],
    ["eclipse-temurin", { repository: "eclipse-temurin" }],
    [
      `ghcr.io/pterodactyl/yolks:java_21@sha256:${"a".repeat(64)}`,
      { repository: "ghcr.io/pterodactyl/yolks", tag: "java_21", digest: `sha256:${"a".repeat(64)}` },
    ],
    [
      `ghcr.io/pterodactyl/yolks@sha256:${"b".repeat(64)}`,
      { repository: "ghcr.io/pterodactyl/yolks", digest: `sha256:${"b".repeat(64)}` },
    ],
  ])("%s: the tag after the last slash, the digest after @", (image, parts) => {
    expect(imageParts(image)).toEqual(parts);
  });
});
