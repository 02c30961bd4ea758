import { gzipSync } from "node:zlib";
import { compoundBomb } from "@mcops/testkit";
import nbt from "prismarine-nbt";
import { describe, expect, it } from "vitest";
import { readLevelDat } from "../src/level-dat.ts";
import { MAX_VALUES, readNbtFields, walkNbt } from "../src/nbt-walk.ts";

/** A root compound "" holding list "x" of `lists` lists of TAG_End, each claiming 0xFFFFFF elements: 4 GB from ~400 B. */
function endListBomb(lists: number): Buffer {
  const head = Buffer.from([10, 0, 0, 9, 0, 1, 0x78, 9, 0, 0, 0, 0]);
  head.writeInt32BE(lists, 8);
  const inner = Buffer.from([0, 0, 0xff, 0xff, 0xff]);
  return Buffer.concat([head, ...Array.from({ length: lists }, () => inner), Buffer.from([0])]);
}

const written = (root: unknown) => nbt.writeUncompressed(root as nbt.NBT, "big");

describe("walkNbt", () => {
  it("passes what the game writes: every tag, nested lists, an empty TAG_End list, non-ASCII names", () => {
    const root = nbt.comp({
      Data: nbt.comp({
        DataVersion: nbt.int(4189),
        Name: nbt.string("wörld ⛏"), // prismarine-nbt writes UTF-8: only BMP characters are the same in modified UTF-8
        Pos: nbt.list(nbt.double([1, 2, 3])),
        Bytes: nbt.byteArray([1, 2, 3]),
        Ints: nbt.intArray([1, 2]),
        Longs: nbt.longArray([1n, 2n] as unknown as number[]),
        Seed: nbt.long([0, 42]),
        Small: nbt.short(3),
        Tiny: nbt.byte(1),
        Ratio: nbt.float(0.5),
        Nested: nbt.list(nbt.list([nbt.string(["a", "b"]), nbt.string(["c"])] as never)),
        Items: nbt.list(nbt.comp([{ id: nbt.string("minecraft:torch") }, { id: nbt.string("minecraft:stone") }])),
      }),
    });
    const bytes = written(root);
    expect(walkNbt(bytes)).toBeUndefined();
    // The game writes an empty list as a list of TAG_End: [9, name "E", element type 0, count 0] before the end.
    const emptyList = Buffer.from([9, 0, 1, 0x45, 0, 0, 0, 0, 0]);
    expect(walkNbt(Buffer.concat([bytes.subarray(0, -1), emptyList, Buffer.from([0])]))).toBeUndefined();
    // Whatever follows the root compound is not read, as the game does not read it.
    expect(walkNbt(Buffer.concat([bytes, Buffer.from("trailing")]))).toBeUndefined();
  });

  it("refuses a TAG_End list with elements at once", () => {
    expect(walkNbt(endListBomb(64))).toBe("a list of TAG_End holds 16777215 elements");
  });

  it("walks a bomb of millions of empty compounds without building them, and refuses it past the budget", () => {
    const bomb = compoundBomb(60_000_000);
    expect(gzipSync(bomb).length).toBeLessThan(100 * 1024); // what sits on disk: ~60 KiB
    const heapBefore = process.memoryUsage().heapUsed;
    expect(walkNbt(bomb)).toBe(`it holds more than ${MAX_VALUES} values, far more than the game writes`);
    // Nothing was built: the heap grew by far less than one object per value.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(16 * 1024 * 1024);
    expect(walkNbt(compoundBomb(1000))).toBeUndefined();
    expect(walkNbt(compoundBomb(1000), 500)).toBe("it holds more than 500 values, far more than the game writes");
  });

  it("skips a list of numbers whole, as one value: the game reads one of millions of bytes, and nothing is built", () => {
    const bytes = Buffer.from([10, 0, 0, 9, 0, 1, 0x61, 1, 0, 0x50, 0, 0, ...new Array(0x500000).fill(0), 0]);
    expect(walkNbt(bytes)).toBeUndefined();
    // A list of strings is counted element by element: each would be a string to a tree parser.
    const strings = Buffer.from([10, 0, 0, 9, 0, 1, 0x61, 8, 0, 0, 0x10, 0, ...new Array(4096 * 2).fill(0), 0]);
    expect(walkNbt(strings)).toBeUndefined();
    expect(walkNbt(strings, 4000)).toMatch(/^it holds more than 4000 values/);
  });

  it("takes 512 compounds and lists nested, the root included, and refuses the 513th, as the game does (1.20.2+)", () => {
    const nested = (compounds: number, tail: number[] = []) =>
      Buffer.concat([
        Buffer.from([10, 0, 0]),
        ...Array.from({ length: compounds - 1 }, () => Buffer.from([10, 0, 1, 0x61])),
        Buffer.from(tail),
        Buffer.alloc(compounds, 0),
      ]);
    expect(walkNbt(nested(512))).toBeUndefined();
    expect(walkNbt(nested(513))).toBe("it is nested deeper than 512");
    // 511 compounds and a list of ints: 512; a list of an empty list inside: 513.
    expect(walkNbt(nested(511, [9, 0, 1, 0x62, 3, 0, 0, 0, 1, 0, 0, 0, 7]))).toBeUndefined();
    expect(walkNbt(nested(511, [9, 0, 1, 0x62, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0]))).toBe("it is nested deeper than 512");
  });

  it("refuses nesting deeper than the game's 512, negative lengths, unknown tags, an early end, a non-compound root", () => {
    const deep = Buffer.concat([
      Buffer.from([10, 0, 0]),
      ...Array.from({ length: 600 }, () => Buffer.from([10, 0, 1, 0x61])),
    ]);
    expect(walkNbt(deep)).toBe("it is nested deeper than 512");
    const deepLists = Buffer.concat([
      Buffer.from([10, 0, 0, 9, 0, 1, 0x61]),
      ...Array.from({ length: 600 }, () => Buffer.from([9, 0, 0, 0, 1])),
    ]);
    expect(walkNbt(deepLists)).toBe("it is nested deeper than 512");
    expect(walkNbt(Buffer.from([10, 0, 0, 7, 0, 1, 0x61, 0xff, 0xff, 0xff, 0xff, 0]))).toBe(
      "a length is negative (-1)",
    );
    expect(walkNbt(Buffer.from([10, 0, 0, 13, 0, 1, 0x61, 0]))).toBe("tag 13 is not an NBT tag");
    expect(walkNbt(Buffer.from([10, 0, 0, 9, 0, 1, 0x61, 13, 0, 0, 0, 1, 0]))).toBe("tag 13 is not an NBT tag");
    expect(walkNbt(Buffer.from([10, 0, 0, 8, 0, 1, 0x61, 0, 9, 0x61]))).toBe("it ends early");
    expect(walkNbt(Buffer.from([10, 0, 0, 12, 0, 1, 0x61, 0x10, 0, 0, 0, 0]))).toBe("it ends early");
    expect(walkNbt(Buffer.from([9, 0, 0]))).toBe("it starts with tag 9, not a compound");
    expect(walkNbt(Buffer.alloc(0))).toBe("it is empty");
  });

  it("refuses a string that is not Java's modified UTF-8, as the game's readUTF does", () => {
    const withName = (name: number[]) => Buffer.from([10, 0, 0, 1, 0, name.length, ...name, 1, 0]);
    expect(walkNbt(withName([0x61, 0xc3, 0xa9]))).toBeUndefined(); // "aé"
    expect(walkNbt(withName([0xc0, 0x80]))).toBeUndefined(); // the game's NUL
    expect(walkNbt(withName([0xed, 0xa0, 0xbd, 0xed, 0xb7, 0xba]))).toBeUndefined(); // a surrogate pair, as Java writes it
    expect(walkNbt(withName([0x61, 0xff]))).toMatch(/^a string at byte \d+ is not modified UTF-8$/);
    expect(walkNbt(withName([0xc3]))).toMatch(/is not modified UTF-8/); // cut in the middle of a character
    expect(walkNbt(withName([0xf0, 0x9f, 0x97, 0xba]))).toMatch(/is not modified UTF-8/); // 4-byte UTF-8
  });
});

describe("readNbtFields and readLevelDat", () => {
  const levelDat = (fields: Record<string, unknown>) =>
    gzipSync(written(nbt.comp({ Data: nbt.comp(fields as Record<string, nbt.Tags[nbt.TagType]>) })));

  it("reads Data.DataVersion, Data.Version.Name and Data.LevelName by the walk, at any place in the file", () => {
    const data = levelDat({
      Player: nbt.comp({ DataVersion: nbt.int(1), Version: nbt.comp({ Name: nbt.string("not this") }) }),
      LevelName: nbt.string("survival"),
      Version: nbt.comp({ Id: nbt.int(4189), Name: nbt.string("1.21.4"), Snapshot: nbt.byte(0) }),
      DataVersion: nbt.int(4189),
    });
    expect(readLevelDat(data)).toEqual({ levelName: "survival", dataVersion: 4189, versionName: "1.21.4" });
  });

  it("gives undefined for a field of the wrong type, and reads every number type as a number", () => {
    expect(readLevelDat(levelDat({ DataVersion: nbt.string("4189"), LevelName: nbt.int(3) }))).toEqual({
      levelName: undefined,
      dataVersion: undefined,
      versionName: undefined,
    });
    const bytes = written(nbt.comp({ a: nbt.byte(-2), b: nbt.short(300), c: nbt.float(1.5), d: nbt.long([0, 7]) }));
    const read = readNbtFields(bytes, [["a"], ["b"], ["c"], ["d"]]);
    expect("fields" in read && Object.fromEntries(read.fields)).toEqual({ a: -2, b: 300, c: 1.5, d: 7n });
  });

  it("reads the first gzip member and ignores what follows, as Java's GZIPInputStream does; checks its CRC-32", () => {
    const data = levelDat({ DataVersion: nbt.int(4189), LevelName: nbt.string("world") });
    const expected = { levelName: "world", dataVersion: 4189, versionName: undefined };
    expect(readLevelDat(Buffer.concat([data, Buffer.from("trailing bytes a plugin left")]))).toEqual(expected);
    // A header with a file name and a comment, as other gzip writers make.
    const named = Buffer.from(data);
    named[3] = 8 | 16;
    const withName = Buffer.concat([named.subarray(0, 10), Buffer.from("level.dat\0a comment\0"), named.subarray(10)]);
    expect(readLevelDat(withName)).toEqual(expected);
    const bad = Buffer.from(data);
    bad.writeUInt32LE((bad.readUInt32LE(bad.length - 8) ^ 1) >>> 0, bad.length - 8);
    expect(readLevelDat(bad)).toEqual({ problem: "not gzip (its CRC-32 does not match)" });
    expect(readLevelDat(data.subarray(0, data.length - 4))).toEqual({
      problem: "not gzip (it ends before its checksum)",
    });
  });

  it("reads a chunk's position by the walk that checks it: ints at the root or in Level, an entities chunk's int array", () => {
    const chunk = written(
      nbt.comp({
        DataVersion: nbt.int(1343),
        Level: nbt.comp({
          xPos: nbt.int(97),
          zPos: nbt.int(-5),
          Sections: nbt.list(nbt.comp([{ xPos: nbt.int(1) }])),
          Structures: nbt.comp({ xPos: nbt.int(2) }),
        }),
        Position: nbt.intArray([107, -5]),
        Long: nbt.intArray(Array.from({ length: 17 }, (_, i) => i)),
      }),
    );
    const rootTypes = new Map<string, number>();
    const read = readNbtFields(
      chunk,
      [["Level", "xPos"], ["Level", "zPos"], ["xPos"], ["Position"], ["Long"], ["Level", "Structures", "zPos"]],
      undefined,
      rootTypes,
    );
    expect("fields" in read && Object.fromEntries(read.fields)).toEqual({
      "Level.xPos": 97,
      "Level.zPos": -5,
      Position: [107, -5],
    });
    // The root's entries by type, as walkNbt gives them (a terrain chunk's Status or Level).
    expect(Object.fromEntries(rootTypes)).toEqual({ DataVersion: 3, Level: 10, Position: 11, Long: 11 });
    // The same bounds as the walk without fields: a field in NBT cut short is no answer, the reason is.
    expect(readNbtFields(chunk.subarray(0, chunk.length - 3), [["Level", "xPos"]])).toEqual({
      problem: "it ends early",
    });
  });

  it("reads a field by its names, not by a name with dots in it", () => {
    const forged = gzipSync(
      written(
        nbt.comp({ "Data.DataVersion": nbt.int(4189), "Data.LevelName": nbt.string("world"), Data: nbt.comp({}) }),
      ),
    );
    expect(readLevelDat(forged)).toEqual({ levelName: undefined, dataVersion: undefined, versionName: undefined });
  });

  it("says why a level.dat bomb is not a level.dat, without building it", () => {
    const bomb = gzipSync(compoundBomb(10_000_000, { name: "world", dataVersion: 4189 }));
    expect(readLevelDat(bomb)).toEqual({
      problem: `not NBT (it holds more than ${MAX_VALUES} values, far more than the game writes)`,
    });
    const huge = gzipSync(compoundBomb(60_000_000, { name: "world", dataVersion: 4189 }));
    expect(readLevelDat(huge)).toEqual({ problem: "more than 16777216 bytes inflated" });
    expect(readLevelDat(Buffer.from("plain text"))).toMatchObject({ problem: expect.stringMatching(/^not gzip \(/) });
  });
});
