/**
 * A walk over NBT bytes before prismarine-nbt parses them: the game's files are the game user's, and a few hundred
 * bytes can make a parser allocate gigabytes (a list of TAG_End elements takes no bytes per element, so a list of 64
 * such lists of 16 million each is 4 GB of array slots from 400 bytes). The walk allocates nothing, takes time in
 * proportion to the bytes, and refuses what the game never writes: a TAG_End list with elements, nesting deeper than
 * the game's own limit of 512, a negative length, an unknown tag, bytes that end early.
 */
const MAX_DEPTH = 512;

class Shape extends Error {}

/** Byte, short, int, long, float, double. */
const FIXED_SIZES: Record<number, number> = { 1: 1, 2: 2, 3: 4, 4: 8, 5: 4, 6: 8 };

/** Why `data` is not the shape of one NBT compound the game could have written; undefined when it is. */
export function nbtShapeProblem(data: Buffer): string | undefined {
  let pos = 0;
  const skip = (n: number) => {
    if (n < 0 || pos + n > data.length) throw new Shape("it ends early");
    pos += n;
  };
  const u8 = () => {
    skip(1);
    return data[pos - 1] as number;
  };
  const u16 = () => {
    skip(2);
    return data.readUInt16BE(pos - 2);
  };
  const length = () => {
    skip(4);
    const n = data.readInt32BE(pos - 4);
    if (n < 0) throw new Shape(`a length is negative (${n})`);
    return n;
  };
  const payload = (type: number, depth: number): void => {
    if (depth > MAX_DEPTH) throw new Shape(`it is nested deeper than ${MAX_DEPTH}`);
    const fixed = FIXED_SIZES[type];
    if (fixed !== undefined) skip(fixed);
    else if (type === 7) skip(length());
    else if (type === 8) skip(u16());
    else if (type === 11) skip(length() * 4);
    else if (type === 12) skip(length() * 8);
    else if (type === 9) {
      const element = u8();
      const count = length();
      if (element === 0 && count > 0) throw new Shape(`a list of TAG_End holds ${count} elements`);
      // Every element other than TAG_End takes at least a byte: the loop ends by the data's end at the latest.
      for (let i = 0; i < count; i++) payload(element, depth + 1);
    } else if (type === 10) {
      for (let tag = u8(); tag !== 0; tag = u8()) {
        skip(u16());
        payload(tag, depth + 1);
      }
    } else throw new Shape(`tag ${type} is not an NBT tag`);
  };
  try {
    if (u8() !== 10) return "the root is not a compound";
    skip(u16());
    payload(10, 0);
    return undefined;
  } catch (error) {
    if (error instanceof Shape) return error.message;
    throw error;
  }
}
