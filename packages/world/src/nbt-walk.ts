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
 * `readNbtFields` reads a few named fields (level.dat's Data.DataVersion, Data.Version.Name; a chunk's xPos and zPos,
 * an entities chunk's Position) and, when asked, the root compound's entries by type, by the same walk.
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

/**
 * A field's value: numbers for byte, short, int, float and double, bigint for long, text for strings, the numbers of an
 * int array of at most MAX_INT_ARRAY_FIELD (an entities chunk's Position, [x, z]).
 */
export type NbtField = number | bigint | string | readonly number[];

/** An int array field longer than this is not read (its length still bounds the walk, as every array's does). */
const MAX_INT_ARRAY_FIELD = 16;

class Walker {
  pos = 0;
  values = 0;
  readonly #data: Uint8Array;
  readonly #view: DataView;
  readonly #maxValues: number;
  /** The fields wanted, as a tree of their names from the root (undefined: none), and what was found of them. */
  readonly #fields: FieldNode | undefined;
  readonly found = new Map<string, NbtField>();
  /** The root compound's entries by name and tag type, when asked for (a chunk's `Status`, `Level`). */
  readonly #rootTypes: Map<string, number> | undefined;

  constructor(
    data: Uint8Array,
    maxValues: number,
    wanted?: ReadonlyArray<readonly string[]>,
    rootTypes?: Map<string, number>,
  ) {
    this.#data = data;
    this.#view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    this.#maxValues = maxValues;
    this.#fields = wanted?.length ? fieldTree(wanted) : undefined;
    this.#rootTypes = rootTypes;
  }

  root(): void {
    const data = this.#data;
    if (data.length === 0) throw new NbtProblem("it is empty");
    if (data[0] !== TAG_COMPOUND) throw new NbtProblem(`it starts with tag ${data[0]}, not a compound`);
    this.pos = 1;
    this.#string();
    this.#count(1);
    this.#compound(1, this.#fields);
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
   * A compound's entries up to its TAG_End; `depth`: the compounds and lists it is in, itself included. `fields`: the
   * wanted fields in it, when there are any (their names are compared as bytes, nothing is decoded for them).
   */
  #compound(depth: number, fields: FieldNode | undefined): void {
    const data = this.#data;
    for (;;) {
      this.#need(1);
      const type = data[this.pos++] as number;
      if (type === 0) return;
      const nameAt = this.#string();
      if (depth === 1 && this.#rootTypes) this.#rootTypes.set(decodeName(data, nameAt, this.pos), type);
      let inner: FieldNode | undefined;
      const field = fields && fieldNamed(fields, data, nameAt, this.pos);
      if (field) {
        if (field.key !== undefined) this.#take(field.key, type);
        if (type === TAG_COMPOUND && field.children.length) inner = field;
      }
      this.#count(1);
      this.#payload(type, depth, inner);
    }
  }

  /** A value inside `depth` compounds and lists; a compound or a list is one more. */
  #payload(type: number, depth: number, fields: FieldNode | undefined): void {
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
        this.#compound(depth + 1, fields);
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

  /**
   * The value of a wanted field that starts at `pos`: a number, a string or a short int array; other types are not
   * read. Where its bytes end early it is not read either: the walk then says why the NBT is not whole.
   */
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
    } else if (type === TAG_INT_ARRAY && this.pos + 4 <= this.#data.length) {
      const length = this.#view.getInt32(this.pos);
      const at = this.pos + 4;
      if (length >= 0 && length <= MAX_INT_ARRAY_FIELD && at + 4 * length <= this.#data.length) {
        const view = this.#view;
        this.found.set(
          name,
          Array.from({ length }, (_, i) => view.getInt32(at + 4 * i)),
        );
      }
    }
  }
}

/**
 * A name of a wanted field's path: `key` (its names joined by dots) when a wanted field ends here, `children` the names
 * below it. Names are compared as their UTF-8 bytes, one by one, so that a name holding a dot is never another path;
 * UTF-8 is modified UTF-8 for the names read here (no NUL, nothing past U+FFFF).
 */
interface FieldNode {
  name: Uint8Array;
  key: string | undefined;
  children: FieldNode[];
}

/** The trees of the path lists given (a caller's constant list is made into one once). */
const fieldTrees = new WeakMap<ReadonlyArray<readonly string[]>, FieldNode>();

function fieldTree(paths: ReadonlyArray<readonly string[]>): FieldNode {
  const known = fieldTrees.get(paths);
  if (known) return known;
  const root: FieldNode = { name: new Uint8Array(0), key: undefined, children: [] };
  for (const path of paths) {
    let node = root;
    for (const name of path) {
      const bytes = Buffer.from(name, "utf8");
      let child = node.children.find((c) => Buffer.compare(c.name, bytes) === 0);
      if (!child) {
        child = { name: bytes, key: undefined, children: [] };
        node.children.push(child);
      }
      node = child;
    }
    node.key = path.join(".");
  }
  fieldTrees.set(paths, root);
  return root;
}

/** The child of `node` named by the bytes of `data` from `start` to `end`, if any. */
function fieldNamed(node: FieldNode, data: Uint8Array, start: number, end: number): FieldNode | undefined {
  const length = end - start;
  for (const child of node.children) {
    const name = child.name;
    if (name.length !== length) continue;
    let i = 0;
    while (i < length && name[i] === data[start + i]) i++;
    if (i === length) return child;
  }
  return undefined;
}

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
 * instead when it is not. `rootTypes`, when given, gets the root compound's entries by name and tag type (walkNbt's).
 */
export function readNbtFields(
  data: Uint8Array,
  paths: ReadonlyArray<readonly string[]>,
  maxValues = MAX_VALUES,
  rootTypes?: Map<string, number>,
): { fields: Map<string, NbtField> } | { problem: string } {
  const walker = new Walker(data, maxValues, paths, rootTypes);
  try {
    walker.root();
    return { fields: walker.found };
  } catch (error) {
    if (error instanceof NbtProblem) return { problem: error.message };
    throw error;
  }
}
