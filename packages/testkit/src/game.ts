import type { AddressInfo } from "node:net";
import mc from "minecraft-protocol";

/**
 * A real Minecraft protocol server on 127.0.0.1 (minecraft-protocol, offline mode) that answers the Server List Ping
 * with the players really connected, and real protocol clients to join it.
 */
export interface GameServer {
  /** host:port */
  address: string;
  port: number;
  /** Connects a real client as `name`; resolves once the server counts it. */
  join(name: string): Promise<{ leave(): Promise<void> }>;
  online(): number;
  close(): Promise<void>;
}

export async function startGameServer(options: { version?: string; maxPlayers?: number } = {}): Promise<GameServer> {
  const version = options.version ?? "1.21.4";
  const server = mc.createServer({
    "online-mode": false,
    host: "127.0.0.1",
    port: 0,
    version,
    maxPlayers: options.maxPlayers ?? 20,
    motd: "mcops test",
  });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const port = (server as unknown as { socketServer: { address(): AddressInfo } }).socketServer.address().port;
  const clients = new Set<mc.Client>();
  const online = () => Object.values(server.clients).filter((c) => (c as mc.ServerClient).state === "play").length;
  // Bounded by count, at least 60 s: a loaded machine makes a join slow, never a test wrong.
  const until = async (test: () => boolean, what: string) => {
    for (let i = 0; i < 6000 && !test(); i++) await new Promise((r) => setTimeout(r, 10));
    if (!test()) throw new Error(`game server: ${what} did not happen in 6000 looks (60 s or more)`);
  };
  // Answer one Server List Ping before handing the server out: the first one loads the protocol's tables, which on a
  // busy machine can take longer than a tool's ping timeout; the tools' first ping is then answered like any other.
  await mc.ping({ host: "127.0.0.1", port, version });
  return {
    address: `127.0.0.1:${port}`,
    port,
    online,
    async join(name) {
      const before = online();
      const client = mc.createClient({ host: "127.0.0.1", port, username: name, auth: "offline", version });
      client.on("error", () => {});
      clients.add(client);
      await until(() => online() > before, `${name} joining`);
      return {
        async leave() {
          const count = online();
          client.end();
          clients.delete(client);
          await until(() => online() < count, `${name} leaving`);
        },
      };
    },
    async close() {
      for (const client of clients) client.end();
      server.close();
    },
  };
}
