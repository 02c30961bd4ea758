/**
 * The Server List Ping over any byte stream (wiki.vg "Server List Ping", the protocol's status state): a handshake
 * with next state 1, a status request, and the status response's JSON. Web Streams only, no `node:` import, so the
 * same code pings the game from Node (a socket through Duplex.toWeb) and from a Cloudflare Worker (`connect()` of
 * `cloudflare:sockets`), where minecraft-server-util cannot run.
 */

/** `play.example.com:25566` → host and port (25565 when none is given). */
export function parseGameAddress(address: string): { host: string; port: number } {
  const match = /^(.+?)(?::(\d{1,5}))?$/.exec(address.trim());
  return { host: match?.[1] ?? "127.0.0.1", port: Number(match?.[2] ?? 25565) };
}

/** What a status response says of the players. */
export interface ListPing {
  online: number;
  max: number;
  /** The sample of names the server chose to show (often the first 12). */
  names: string[];
}

/** The status response is one JSON string: at most 32767 characters of up to 4 bytes, and its framing. */
const MAX_RESPONSE_BYTES = 32767 * 4 + 10;

function varInt(value: number): number[] {
  const bytes: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0);
  return bytes;
}

function packet(id: number, data: number[]): Uint8Array {
  const body = [...varInt(id), ...data];
  return Uint8Array.from([...varInt(body.length), ...body]);
}

/** Handshake (protocol -1: "whatever you speak", next state 1: status) and the status request, as one write. */
export function statusRequest(host: string, port: number): Uint8Array {
  const name = [...new TextEncoder().encode(host)];
  const handshake = packet(0x00, [...varInt(-1), ...varInt(name.length), ...name, (port >> 8) & 0xff, port & 0xff, 1]);
  const request = packet(0x00, []);
  const both = new Uint8Array(handshake.length + request.length);
  both.set(handshake);
  both.set(request, handshake.length);
  return both;
}

/** A VarInt at `at`: its value and where it ends; undefined when the bytes end first (or it is longer than 5). */
function readVarInt(bytes: Uint8Array, at: number): { value: number; end: number } | undefined {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    const byte = bytes[at + i];
    if (byte === undefined) return undefined;
    value |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) === 0) return { value, end: at + i + 1 };
  }
  throw new Error("the server's answer is not the Minecraft protocol (a VarInt longer than 5 bytes)");
}

/**
 * The players from a complete status response packet in `bytes`; undefined while more bytes are needed. Throws when
 * the bytes are not a status response.
 */
export function parseStatusResponse(bytes: Uint8Array): ListPing | undefined {
  const length = readVarInt(bytes, 0);
  if (!length) return undefined;
  if (length.value < 0 || length.value > MAX_RESPONSE_BYTES)
    throw new Error(`the server's answer is too long (${length.value} bytes)`);
  if (bytes.length < length.end + length.value) return undefined;
  const id = readVarInt(bytes, length.end);
  if (id?.value !== 0x00) throw new Error("the server's answer is not a status response");
  const size = readVarInt(bytes, id.end);
  if (!size || size.value < 0 || size.end + size.value > length.end + length.value)
    throw new Error("the status response is cut short");
  const text = new TextDecoder().decode(bytes.subarray(size.end, size.end + size.value));
  const status = JSON.parse(text) as { players?: { online?: unknown; max?: unknown; sample?: unknown } };
  const players = status?.players;
  if (typeof players?.online !== "number" || typeof players.max !== "number") {
    throw new Error("the status response has no player count");
  }
  const sample = Array.isArray(players.sample) ? players.sample : [];
  return {
    online: players.online,
    max: players.max,
    names: sample
      .map((p) => (p as { name?: unknown })?.name)
      .filter((n): n is string => typeof n === "string")
      .slice(0, 100),
  };
}

/**
 * Pings over an open connection: writes the request, reads until the response is whole (at most MAX_RESPONSE_BYTES).
 * The caller owns the connection (opens it, bounds the time, closes it).
 */
export async function listPing(
  connection: { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> },
  host: string,
  port: number,
): Promise<ListPing> {
  const writer = connection.writable.getWriter();
  await writer.write(statusRequest(host, port));
  writer.releaseLock();
  const reader = connection.readable.getReader();
  let buffer = new Uint8Array(0);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error("the server closed the connection before answering");
      const next = new Uint8Array(buffer.length + value.length);
      next.set(buffer);
      next.set(value, buffer.length);
      buffer = next;
      if (buffer.length > MAX_RESPONSE_BYTES) throw new Error("the server's answer is too long");
      const answer = parseStatusResponse(buffer);
      if (answer) return answer;
    }
  } finally {
    reader.releaseLock();
  }
}
