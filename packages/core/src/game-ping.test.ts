import { startGameServer } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import { parseGameAddress, pingGame } from "./game-ping.ts";

describe("pingGame (Server List Ping)", () => {
  it("counts the players a real protocol server has, as they join and leave", async () => {
    const game = await startGameServer();
    try {
      expect((await pingGame(game.address)).ping).toMatchObject({ online: 0, max: 20 });
      const steve = await game.join("Steve");
      await game.join("Alex");
      expect((await pingGame(game.address)).ping?.online).toBe(2);
      await steve.leave();
      expect((await pingGame(game.address)).ping?.online).toBe(1);
    } finally {
      await game.close();
    }
  });

  it("says why when nothing answers", async () => {
    const game = await startGameServer();
    await game.close();
    const result = await pingGame(game.address, 1000);
    expect(result.ping).toBeUndefined();
    expect(result.error).toBeTruthy();
  });

  it("reads host:port, defaulting to the game's port", () => {
    expect(parseGameAddress("play.example.com")).toEqual({ host: "play.example.com", port: 25565 });
    expect(parseGameAddress("127.0.0.1:25566")).toEqual({ host: "127.0.0.1", port: 25566 });
  });
});
