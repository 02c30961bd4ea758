import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { readRange } from "@mcops/core/volume";

/**
 * A small file read whole, through a descriptor: opened without blocking (a FIFO named like a certificate must not
 * hang the tool) and refused when it is not a regular file or is larger than `maxBytes`.
 */
export function readRegular(file: string, maxBytes = 1024 * 1024): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw Object.assign(new Error("not a regular file"), { code: "ENOTREG" });
    if (stat.size > maxBytes) throw Object.assign(new Error(`${stat.size} bytes`), { code: "EFBIG" });
    return readRange(fd, 0, maxBytes).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
