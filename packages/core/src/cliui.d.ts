/** cliui, yargs' layout library, ships no typings: what help.ts calls of it. */
declare module "cliui" {
  export interface Column {
    text: string;
    width?: number;
    align?: "left" | "right" | "center";
    padding?: [number, number, number, number];
  }
  export interface UI {
    div(...columns: (Column | string)[]): unknown;
    span(...columns: (Column | string)[]): void;
    toString(): string;
  }
  export default function cliui(options: { width: number; wrap: boolean }): UI;
}
