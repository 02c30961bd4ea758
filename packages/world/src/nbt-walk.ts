/**
 * NBT as the game reads it (net.minecraft.nbt.NbtIo, the tag types' readers), walked over the inflated bytes without
 * building anything: the game's files are the game user's, and prismarine-nbt turns a 60 KiB level.dat of lists of
 * empty compounds into tens of millions of objects (V8 aborts at ~4.6 GB). This walker allocates nothing, takes time
 * in proportion to the bytes, and refuses what the game would refuse or never writes:
 *
 * - a root that is not a compound, an unknown tag type, a negative length, bytes that end early;
 * - nesting deeper than the game's own limit: 512 compounds and lists, the root included (NbtAccounter.pushDepth,
 *   1.20.2 and later, refuses the 513th);
 * - a list of TAG_End with elements ("Missing type on ListTag"), so every value takes at least one byte;
 * - a string that is not Java's modified UTF-8 (DataInput.readUTF throws on it, and the chunk is lost);
 * - more than `maxValues` values (every tag, every element of a list of compounds, lists or strings; a list of numbers
 *   and an array are one value each, skipped whole): the budget that bounds whatever would materialise the tree, and a
 *   limit no world the game wrote comes near.
 *
 * `readNbtFields` reads a few named fields (level.dat's Data.DataVersion, Data.Version.Name) by the same walk.
 */

/** The game's NbtAccounter depth limit: compounds and lists nested, the root one included. */
const MAX_DEPTH = 512;
/**
 * Values in one NBT document. A 1.18+ chunk holds a few thousand (its arrays are one value each), a player's file with
 * full shulker boxes a few tens of thousands, level.dat a few hundred; a bomb holds tens of millions.
 */
export const MAX_VALUES = 4 * 1024 * 1024;

/** The NBT tag types by their ids. */
export const TAG = {
  END: 0,
  BYTE: 1,
  SHORT: 2,
  INT: 3,
  LONG: 4,
  FLOAT: 5,
  DOUBLE: 6,
  BYTE_ARRAY: 7,
  STRING: 8,
  LIST: 9,
  COMPOUND: 10,
  INT_ARRAY: 11,
  LONG_ARRAY: 12,
} as const;

/** The sizes of byte, short, int, long, float and double (tags 1 to 6). */
const FIXED = new Int8Array([-1, 1, 2, 4, 8, 4, 8, -1, -1, -1, -1, -1, -1]);
const {
  BYTE_ARRAY: TAG_BYTE_ARRAY,
  STRING: TAG_STRING,
  LIST: TAG_LIST,
  COMPOUND: TAG_COMPOUND,
  INT_ARRAY: TAG_INT_ARRAY,
  LONG_ARRAY: TAG_LONG_ARRAY,
} = TAG;

class NbtProblem extends Error {}

/** A field's value: numbers for byte, short, int, float and double, bigint for long, text for strings. */
export type NbtField = number | bigint | string;

class Walker {
  pos = 0;
  values = 0;
  readonly #data: Uint8Array;
  readonly #view: DataView;
  readonly #maxValues: number;
  /** The fields wanted, by pathKey() of their names (`["Data", "Version", "Name"]`), and what was found of them. */
  readonly #wanted: ReadonlySet<string> | undefined;
  readonly found = new Map<string, NbtField>();
  /** The root compound's entries by name and tag type, when asked for (a chunk's `Status`, `Level`). */
  readonly #rootTypes: Map<string, number> | undefined;

  constructor(data: Uint8Array, maxValues: number, wanted?: ReadonlySet<string>, rootTypes?: Map<string, number>) {
    this.#data = data;
    this.#view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    this.#maxValues = maxValues;
    this.#wanted = wanted;
    this.#rootTypes = rootTypes;
  }

  root(): void {
    const data = this.#data;
    if (data.length === 0) throw new NbtProblem("it is empty");
    if (data[0] !== TAG_COMPOUND) throw new NbtProblem(`it starts with tag ${data[0]}, not a compound`);
    this.pos = 1;
    this.#string();
    this.#count(1);
    this.#compound(1, this.#wanted ? [] : undefined);
  }

  #need(n: number): void {
    if (n > this.#data.length - this.pos) throw new NbtProblem("it ends early");
  }

  #count(n: number): void {
    this.values += n;
    if (this.values > this.#maxValues) {
      throw new NbtProblem(`it holds more than ${this.#maxValues} values, far more than the game writes`);
    }
  }

  #length(): number {
    this.#need(4);
    const n = this.#view.getInt32(this.pos);
    this.pos += 4;
    if (n < 0) throw new NbtProblem(`a length is negative (${n})`);
    return n;
  }

  /** Skips a string after checking it is modified UTF-8; returns where its bytes start. */
  #string(): number {
    this.#need(2);
    const data = this.#data;
    const length = (data[this.pos] as number) * 256 + (data[this.pos + 1] as number);
    const start = this.pos + 2;
    this.pos = start;
    this.#need(length);
    const end = start + length;
    let i = start;
    while (i < end) {
      const c = data[i] as number;
      if (c < 0x80) i++;
      else if ((c & 0xe0) === 0xc0) {
        if (i + 1 >= end || ((data[i + 1] as number) & 0xc0) !== 0x80) throw this.#badString();
        i += 2;
      } else if ((c & 0xf0) === 0xe0) {
        if (i + 2 >= end || ((data[i + 1] as number) & 0xc0) !== 0x80 || ((data[i + 2] as number) & 0xc0) !== 0x80) {
          throw this.#badString();
        }
        i += 3;
      } else throw this.#badString();
    }
    this.pos = end;
    return start;
  }

  #badString(): NbtProblem {
    return new NbtProblem(`a string at byte ${this.pos} is not modified UTF-8`);
  }

  /**
   * A compound's entries up to its TAG_End; `depth`: the compounds and lists it is in, itself included. `path` (the
   * names leading to it) only when fields are wanted.
   */
  #compound(depth: number, path: readonly string[] | undefined): void {
    const data = this.#data;
    for (;;) {
      this.#need(1);
      const type = data[this.pos++] as number;
      if (type === 0) return;
      const nameAt = this.#string();
      if (depth === 1 && this.#rootTypes) this.#rootTypes.set(decodeName(data, nameAt, this.pos), type);
      const name = path === undefined ? undefined : [...path, decodeName(data, nameAt, this.pos)];
      if (name !== undefined && this.#wanted?.has(pathKey(name))) this.#take(pathKey(name), type);
      this.#count(1);
      this.#payload(type, depth, name);
    }
  }

  /** A value inside `depth` compounds and lists; a compound or a list is one more. */
  #payload(type: number, depth: number, path: readonly string[] | undefined): void {
    const fixed = FIXED[type] ?? -1;
    if (fixed > 0) {
      this.#need(fixed);
      this.pos += fixed;
      return;
    }
    if ((type === TAG_LIST || type === TAG_COMPOUND) && depth >= MAX_DEPTH) {
      throw new NbtProblem(`it is nested deeper than ${MAX_DEPTH}`);
    }
    switch (type) {
      case TAG_BYTE_ARRAY:
        this.#skipArray(1);
        return;
      case TAG_INT_ARRAY:
        this.#skipArray(4);
        return;
      case TAG_LONG_ARRAY:
        this.#skipArray(8);
        return;
      case TAG_STRING:
        this.#string();
        return;
      case TAG_LIST:
        this.#list(depth + 1);
        return;
      case TAG_COMPOUND:
        this.#compound(depth + 1, path);
        return;
      default:
        throw new NbtProblem(`tag ${type} is not an NBT tag`);
    }
  }

  #skipArray(size: number): void {
    const n = this.#length();
    this.#need(n * size);
    this.pos += n * size;
  }

  /** A list's elements; `depth`: the compounds and lists it is in, itself included. */
  #list(depth: number): void {
    this.#need(1);
    const element = this.#data[this.pos++] as number;
    const count = this.#length();
    if (count === 0) return;
    if (element === 0) throw new NbtProblem(`a list of TAG_End holds ${count} elements`);
    const fixed = FIXED[element] ?? -1;
    if (fixed > 0) {
      // Skipped whole, like an array: nothing is made of its elements, so they are not counted one by one.
      this.#need(count * fixed);
      this.pos += count * fixed;
      return;
    }
    if (element > TAG_LONG_ARRAY) throw new NbtProblem(`tag ${element} is not an NBT tag`);
    // Every element takes at least a byte: the loop ends by the data's end at the latest.
    for (let i = 0; i < count; i++) {
      this.#count(1);
      this.#payload(element, depth, undefined);
    }
  }

  /** The value of a wanted field that starts at `pos`: a number or a string; other types are not read. */
  #take(name: string, type: number): void {
    const fixed = FIXED[type] ?? -1;
    if (fixed > 0 && fixed <= this.#data.length - this.pos) {
      const view = this.#view;
      const at = this.pos;
      const values: Record<number, () => NbtField> = {
        1: () => view.getInt8(at),
        2: () => view.getInt16(at),
        3: () => view.getInt32(at),
        4: () => view.getBigInt64(at),
        5: () => view.getFloat32(at),
        6: () => view.getFloat64(at),
      };
      this.found.set(name, (values[type] as () => NbtField)());
    } else if (type === TAG_STRING && this.pos + 2 <= this.#data.length) {
      const length = view16(this.#data, this.pos);
      if (this.pos + 2 + length <= this.#data.length) {
        this.found.set(name, decodeName(this.#data, this.pos + 2, this.pos + 2 + length));
      }
    }
  }
}

/** A field's path as a key no name can forge (a name may hold dots, or anything else). */
const pathKey = (names: readonly string[]): string => JSON.stringify(names);

function view16(data: Uint8Array, at: number): number {
  return (data[at] as number) * 256 + (data[at + 1] as number);
}

/** Modified UTF-8 (already checked) as text: the game's two-byte NUL and surrogate pairs decode as UTF-8 would. */
function decodeName(data: Uint8Array, start: number, end: number): string {
  return Buffer.from(data.buffer, data.byteOffset + start, end - start).toString("utf8");
}

/**
 * Why `data` is not one NBT compound the game would read, or undefined when it is; `rootTypes`, when given, gets the
 * root compound's entries by name and tag type.
 */
export function walkNbt(data: Uint8Array, maxValues = MAX_VALUES, rootTypes?: Map<string, number>): string | undefined {
  try {
    new Walker(data, maxValues, undefined, rootTypes).root();
    return undefined;
  } catch (error) {
    if (error instanceof NbtProblem) return error.message;
    throw error;
  }
}

/**
 * The fields at `paths` (each the names from the root, `["Data", "DataVersion"]`) of one NBT compound, read by the same
 * walk that checks the whole of it, by the same dotted names (`Data.DataVersion`); the first reason it is not NBT
 * instead when it is not.
 */
export function readNbtFields(
  data: Uint8Array,
  paths: ReadonlyArray<readonly string[]>,
  maxValues = MAX_VALUES,
): { fields: Map<string, NbtField> } | { problem: string } {
  const walker = new Walker(data, maxValues, new Set(paths.map(pathKey)));
  try {
    walker.root();
    const fields = new Map<string, NbtField>();
    for (const path of paths) {
      const value = walker.found.get(pathKey(path));
      if (value !== undefined) fields.set(path.join("."), value);
    }
    return { fields };
  } catch (error) {
    if (error instanceof NbtProblem) return { problem: error.message };
    throw error;
  }
}
