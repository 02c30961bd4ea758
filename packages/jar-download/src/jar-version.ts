import { closeSync, read } from "node:fs";
import { Readable } from "node:stream";
import type { VolumeDir } from "@mcops/core/volume";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import { z } from "zod";
import { openJar } from "./download.ts";

/**
 * What a server jar says of itself: the `version.json` at the root of vanilla's bundler jar (and of Paper's, Folia's and
 * Purpur's paperclip jars, which carry the vanilla one) names the game version and its data version
 * (`world_version`). jar-download reads it where minecraft-data cannot say: a jar it did not install (the one the
 * panel's egg put there, now server.jar.previous) and a version newer than this build of mcops knows. The jar is the
 * game user's file: opened without following a link, the zip read with yauzl (its central directory, then one entry of
 * at most 64 KiB, sizes checked as it inflates), anything unexpected an unknown version rather than an error.
 */
export interface JarVersion {
  /** "1.21.4". */
  id: string;
  /** The data version the game writes into level.dat. */
  dataVersion: number;
}

const VERSION_JSON = "version.json";
const MAX_VERSION_JSON = 64 * 1024;
/** A server jar has a few thousand entries; a zip that claims more is not read through. */
const MAX_ENTRIES = 100_000;

const versionJson = z.object({
  id: z.string().regex(/^[0-9A-Za-z._ +-]{1,64}$/),
  world_version: z.number().int().positive(),
});

/** The version jar `name` in `volume` says it is; undefined when it is not a jar with a readable version.json. */
export async function jarVersion(volume: VolumeDir, name: string): Promise<JarVersion | undefined> {
  const file = openJar(volume, name);
  if (!file) return undefined;
  try {
    return await readVersionJson(file.fd, file.stat.size);
  } catch {
    return undefined;
  } finally {
    closeSync(file.fd);
  }
}

/**
 * yauzl reads the file through this, never closing the descriptor (its own fromFd closes it when the zip is closed,
 * which would close it twice here): the caller opened it, the caller closes it. No further than `size`, the size
 * fstat gave when it was opened.
 */
export class DescriptorReader extends yauzl.RandomAccessReader {
  readonly #fd: number;

  constructor(fd: number) {
    super();
    this.#fd = fd;
  }

  // Not fs.createReadStream: destroying one closes its descriptor, whatever autoClose says, and yauzl destroys them.
  override _readStreamForRange(start: number, end: number): Readable {
    const fd = this.#fd;
    let position = start;
    return new Readable({
      read(wanted) {
        const length = Math.min(wanted, end - position, 64 * 1024);
        if (length <= 0) {
          this.push(null);
          return;
        }
        const buffer = Buffer.allocUnsafe(length);
        read(fd, buffer, 0, length, position, (error, bytes) => {
          if (error) this.destroy(error);
          else if (bytes === 0) this.destroy(new Error("the file ended before the zip said"));
          else {
            position += bytes;
            this.push(buffer.subarray(0, bytes));
          }
        });
      },
    });
  }
}

async function readVersionJson(fd: number, size: number): Promise<JarVersion | undefined> {
  const zip = await yauzl.fromRandomAccessReaderPromise(new DescriptorReader(fd), size, {
    lazyEntries: true,
    autoClose: false,
  });
  try {
    if (zip.entryCount > MAX_ENTRIES) return undefined;
    const entry = await findEntry(zip, VERSION_JSON);
    if (!entry || entry.uncompressedSize > MAX_VERSION_JSON) return undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of await zip.openReadStreamPromise(entry)) {
      size += (chunk as Buffer).length;
      if (size > MAX_VERSION_JSON) return undefined;
      chunks.push(chunk as Buffer);
    }
    const parsed = versionJson.safeParse(JSON.parse(Buffer.concat(chunks).toString("utf8")));
    return parsed.success ? { id: parsed.data.id, dataVersion: parsed.data.world_version } : undefined;
  } finally {
    zip.close();
  }
}

/** The entry named `name` (at the root), reading the central directory one entry at a time. */
function findEntry(zip: ZipFile, name: string): Promise<Entry | undefined> {
  return new Promise((resolve, reject) => {
    const done = (entry: Entry | undefined) => {
      zip.off("entry", onEntry);
      zip.off("end", onEnd);
      zip.off("error", reject);
      resolve(entry);
    };
    const onEntry = (entry: Entry) => (entry.fileName === name ? done(entry) : zip.readEntry());
    const onEnd = () => done(undefined);
    zip.on("entry", onEntry);
    zip.on("end", onEnd);
    zip.on("error", reject);
    zip.readEntry();
  });
}
