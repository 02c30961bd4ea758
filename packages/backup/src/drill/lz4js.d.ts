/** xxHash32 as lz4js ships it (the lz4js typings leave this module out). */
declare module "lz4js/xxh32.js" {
  export function hash(seed: number, src: Uint8Array, index: number, length: number): number;
}
