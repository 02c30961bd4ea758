import { gzipSync } from "node:zlib";
import nbt from "prismarine-nbt";
import { describe, expect, it } from "vitest";
import { nbtShapeProblem } from "../src/drill/nbt-shape.ts";
import { parseGzipNbt } from "../src/drill/region.ts";

/** A root compound "" holding list "x" of `lists` lists of TAG_End, each claiming 0xFFFFFF elements: 4 GB from ~400 B. */
function bomb(lists: number): Buffer {
  const head = Buffer.from([10, 0, 0, 9, 0, 1, 0x78, 9, 0, 0, 0, 0]);
  head.writeInt32BE(lists, 8);
  const inner = Buffer.from([0, 0, 0xff, 0xff, 0xff]);
  return Buffer.concat([head, ...Array.from({ length: lists }, () => inner), Buffer.from([0])]);
}

describe("nbtShapeProblem", () => {
  it("passes what the game writes: every tag, and an empty TAG_End list", async () => {
    const root = nbt.comp({
      Data: nbt.comp({
        DataVersion: nbt.int(4189),
        Name: nbt.string("world"),
        Pos: nbt.list(nbt.double([1, 2, 3])),
        Bytes: nbt.byteArray([1, 2, 3]),
        Ints: nbt.intArray([1, 2]),
        Small: nbt.short(3),
        Tiny: nbt.byte(1),
        Ratio: nbt.float(0.5),
      }),
    });
    const written = nbt.writeUncompressed(root as unknown as nbt.NBT, "big");
    expect(nbtShapeProblem(written)).toBeUndefined();
    // The game writes an empty list as a list of TAG_End: [9, name "E", element type 0, count 0] before the end.
    const emptyList = Buffer.from([9, 0, 1, 0x45, 0, 0, 0, 0, 0]);
    const withEmpty = Buffer.concat([written.subarray(0, -1), emptyList, Buffer.from([0])]);
    expect(nbtShapeProblem(withEmpty)).toBeUndefined();
    expect(await parseGzipNbt(gzipSync(withEmpty))).toHaveProperty("value");
  });

  it("refuses a TAG_End list with elements, at once and without allocating", async () => {
    expect(nbtShapeProblem(bomb(64))).toBe("a list of TAG_End holds 16777215 elements");
    expect(await parseGzipNbt(gzipSync(bomb(64)))).toEqual({
      problem: "not NBT (a list of TAG_End holds 16777215 elements)",
    });
  });

  it("refuses nesting deeper than the game's 512, negative lengths, unknown tags, and an early end", () => {
    const deep = Buffer.concat([
      Buffer.from([10, 0, 0]),
      ...Array.from({ length: 600 }, () => Buffer.from([10, 0, 1, 0x61])),
    ]);
    expect(nbtShapeProblem(deep)).toBe("it is nested deeper than 512");
    expect(nbtShapeProblem(Buffer.from([10, 0, 0, 7, 0, 1, 0x61, 0xff, 0xff, 0xff, 0xff, 0]))).toBe(
      "a length is negative (-1)",
    );
    expect(nbtShapeProblem(Buffer.from([10, 0, 0, 13, 0, 1, 0x61, 0]))).toBe("tag 13 is not an NBT tag");
    expect(nbtShapeProblem(Buffer.from([10, 0, 0, 8, 0, 1, 0x61, 0, 9, 0x61]))).toBe("it ends early");
    expect(nbtShapeProblem(Buffer.from([9, 0, 0]))).toBe("the root is not a compound");
  });
});
