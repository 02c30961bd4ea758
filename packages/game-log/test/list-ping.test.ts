import { connect } from "node:net";
import { Duplex } from "node:stream";
import { type GameServer, startGameServer } from "@mcops/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pingGame } from "../src/game-ping.ts";
import { listPing, parseGameAddress, parseStatusResponse, statusRequest } from "../src/list-ping.ts";

/** The Server List Ping over Web Streams, against a real protocol server (minecraft-protocol) and hostile bytes. */
let game: GameServer;

beforeAll(async () => {
  game = await startGameServer();
});
afterAll(async () => {
  await game.close();
});

/** A TCP connection as Web Streams, as a Worker's connect() hands it out. */
async function open(port: number) {
  const socket = connect({ host: "127.0.0.1", port });
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const { readable, writable } = Duplex.toWeb(socket) as {
    readable: ReadableStream<Uint8Array>;
    writable: WritableStream<Uint8Array>;
  };
  return { readable, writable, close: () => socket.destroy() };
}

/** A status response packet around `json`. */
function response(json: string): Uint8Array {
  const text = [...new TextEncoder().encode(json)];
  const varInt = (n: number) => {
    const out: number[] = [];
    do {
      out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      n >>>= 7;
    } while (n);
    return out;
  };
  const body = [0, ...varInt(text.length), ...text];
  return Uint8Array.from([...varInt(body.length), ...body]);
}

describe("list ping", () => {
  it("reads the players of a real server as minecraft-server-util reads them", async () => {
    const steve = await game.join("Steve");
    const connection = await open(game.port);
    try {
      // What minecraft-server-util (the tools' Node ping) reads of the same server.
      const expected = (await pingGame(game.address)).ping;
      expect(expected?.online).toBe(1);
      expect(await listPing(connection, "127.0.0.1", game.port)).toEqual(expected);
    } finally {
      connection.close();
      await steve.leave();
    }
  });

  it("writes the handshake and status request of the protocol", () => {
    // length 13, id 0, protocol -1 (5 bytes), "a.b" (1 + 3), port 25565, next state 1; then length 1, id 0
    expect([...statusRequest("a.b", 25565)]).toEqual([
      13, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 3, 97, 46, 98, 0x63, 0xdd, 1, 1, 0,
    ]);
  });

  it("waits for the whole answer, and refuses what is not one", () => {
    const whole = response('{"players":{"online":2,"max":10,"sample":[{"name":"A"},{"id":"x"}]}}');
    expect(parseStatusResponse(whole.subarray(0, whole.length - 1))).toBeUndefined();
    expect(parseStatusResponse(whole)).toEqual({ online: 2, max: 10, names: ["A"] });
    expect(() => parseStatusResponse(response('{"description":"x"}'))).toThrow(/no player count/);
    expect(() => parseStatusResponse(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow(/too long/);
    expect(() => parseStatusResponse(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]))).toThrow(
      /not the Minecraft protocol/,
    );
    expect(() => parseStatusResponse(Uint8Array.from([2, 5, 0]))).toThrow(/not a status response/);
  });

  it("parses an address with and without its port", () => {
    expect(parseGameAddress("play.example.com")).toEqual({ host: "play.example.com", port: 25565 });
    expect(parseGameAddress(" 10.0.0.2:25566 ")).toEqual({ host: "10.0.0.2", port: 25566 });
  });
});
