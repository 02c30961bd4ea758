import { connect, createServer, type Socket } from "node:net";
import { startGameServer } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import { parseGameAddress, pingGame } from "../src/game-ping.ts";

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

  it("asks again when a ping is lost, and gives up after the attempts", async () => {
    const game = await startGameServer();
    // In front of the game: the first `drop` connections are closed unanswered, the rest go through.
    let drop = 1;
    let seen = 0;
    const front = createServer((socket: Socket) => {
      seen++;
      if (drop-- > 0) {
        socket.destroy();
        return;
      }
      const behind = connect(game.port, "127.0.0.1");
      socket.pipe(behind).pipe(socket);
      behind.on("error", () => socket.destroy());
      socket.on("error", () => behind.destroy());
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const address = `127.0.0.1:${(front.address() as { port: number }).port}`;
    try {
      expect((await pingGame(address)).ping).toMatchObject({ online: 0, max: 20 });
      expect(seen).toBe(2);
      drop = 2;
      seen = 0;
      expect((await pingGame(address, 3000, 2)).ping).toBeUndefined();
      expect(seen).toBe(2);
    } finally {
      front.close();
      await game.close();
    }
  });

  it("reads host:port, defaulting to the game's port", () => {
    expect(parseGameAddress("play.example.com")).toEqual({ host: "play.example.com", port: 25565 });
    expect(parseGameAddress("127.0.0.1:25566")).toEqual({ host: "127.0.0.1", port: 25566 });
  });
});
