import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "./fs.ts";
import type { Logger } from "./log.ts";

/**
 * Prometheus gauges in node_exporter's textfile collector format: one `<name>.prom` file per tool in the directory
 * the operator names (BACKUP_TEXTFILE_DIR), written whole and renamed so the collector never reads half of it. Each
 * gauge carries the server's id as a label, so one node_exporter can serve several servers.
 */
export interface Gauge {
  /** `mcops_...` */
  name: string;
  help: string;
  value: number;
  /** Fixed decimals (3 for seconds with their milliseconds); integers are written as they are otherwise. */
  digits?: number;
  /** More labels beside `server` (several gauges of one name, e.g. one per certificate). */
  labels?: Record<string, string>;
}

/** A label's value as the text format takes it: quotes, backslashes and newlines replaced. */
const labelValue = (value: string) => value.replaceAll(/["\\\n]/g, "_");

/** A gauge's three lines: HELP, TYPE and the value with its `server` label (and its own). */
export function gaugeLines(gauge: Gauge, serverId: string): string[] {
  const value =
    gauge.digits !== undefined
      ? gauge.value.toFixed(gauge.digits)
      : Number.isInteger(gauge.value)
        ? String(gauge.value)
        : gauge.value.toFixed(3);
  return [
    `# HELP ${gauge.name} ${gauge.help}`,
    `# TYPE ${gauge.name} gauge`,
    `${gauge.name}{${labels(gauge, serverId)}} ${value}`,
  ];
}

function labels(gauge: Gauge, serverId: string): string {
  const all = { server: serverId, ...gauge.labels };
  return Object.entries(all)
    .map(([name, value]) => `${name}="${labelValue(value)}"`)
    .join(",");
}

export interface TextfileOptions {
  /** The collector's directory; undefined: no textfile is written. */
  dir: string | undefined;
  /** The file's name, e.g. `mcops_drill.prom`. */
  file: string;
  serverId: string;
  logger: Pick<Logger, "warn">;
  /**
   * Gauges of the previous file kept when this write does not carry them (a failed run keeps the figures of the last
   * good one, so an alert on their age still works).
   */
  keep?: readonly string[];
}

/** Writes the gauges; a directory that cannot be written is a warning, never a failure of the run. */
export function writeGauges(gauges: readonly Gauge[], options: TextfileOptions): void {
  const { dir, file, serverId, logger, keep = [] } = options;
  if (!dir) return;
  const path = join(dir, file);
  // HELP and TYPE once per name: a second gauge of the same name (other labels) is its value line alone.
  const seen = new Set<string>();
  const lines = gauges.flatMap((gauge) => {
    const all = gaugeLines(gauge, serverId);
    if (seen.has(gauge.name)) return all.slice(2);
    seen.add(gauge.name);
    return all;
  });
  const written = new Set(gauges.map((gauge) => gauge.name));
  lines.push(
    ...carriedOver(
      path,
      keep.filter((name) => !written.has(name)),
    ),
  );
  try {
    mkdirSync(dir, { recursive: true });
    writeFileAtomic(path, `${lines.join("\n")}\n`, 0o644);
  } catch (error) {
    logger.warn(`could not write the Prometheus textfile in ${dir} (${(error as NodeJS.ErrnoException).code})`);
  }
}

/** The lines (HELP, TYPE, value) of the previous file's gauges named in `names`. */
function carriedOver(path: string, names: readonly string[]): string[] {
  if (!names.length) return [];
  let previous: string;
  try {
    previous = readFileSync(path, "utf8");
  } catch {
    return []; // no earlier run, or unreadable: nothing to keep
  }
  return previous.split("\n").filter((line) => {
    const name = /^(?:# (?:HELP|TYPE) )?(\w+)/.exec(line)?.[1];
    return name !== undefined && names.includes(name);
  });
}

/** The value of one gauge in a textfile's text, if it is there. */
export function gaugeValue(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text);
  return match ? Number(match[1]) : undefined;
}
