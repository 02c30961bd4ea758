import { inflateSync } from "node:zlib";
import nbt from "prismarine-nbt";
import { walkNbt } from "../../packages/backup/src/drill/nbt-walk.ts";
const m = await import("./drill.ts") as any;
const t0 = Date.now();
const region: Buffer = await m.generatedRegion(0, 0);
const ms = Date.now() - t0;
let comp = 0, infl = 0, n = 0, maxPal = 0;
let first: Buffer | undefined;
for (let i = 0; i < 1024; i++) {
  const e = region.readUInt32BE(i * 4); const s = (e >>> 8) * 4096; const len = region.readUInt32BE(s);
  const p = region.subarray(s + 5, s + 4 + len); const b = inflateSync(p);
  first ??= b;
  comp += p.length; infl += b.length; n++;
  const w = walkNbt(b); if (w) { console.log("bad", i, w); break; }
}
console.log({ ms, regionMiB: region.length / 2**20, chunks: n, avgCompKiB: comp / n / 1024, avgInflKiB: infl / n / 1024, ratio: infl / comp });
const parsed = nbt.parseUncompressed(first!, "big") as any;
const v = nbt.simplify(parsed);
console.log(Object.keys(v), v.sections.length, v.sections.map((s: any) => s.block_states.palette.length).join(","), v.sections[5].block_states.palette.slice(0,4), v.block_entities.length);
console.log(JSON.stringify(v.sections[8]).slice(0, 600));
