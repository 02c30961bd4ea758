/**
 * How many of this server's snapshots a hibernation keeps when nobody says (KEEP_SNAPSHOTS, `--keep`): the new one and
 * the one before it, so that a snapshot that turns out bad still has one behind it. Declared once, for the CLI and the
 * Worker; a file of its own so that the CLI's light entry reads no more than this.
 */
export const KEEP_SNAPSHOTS_DEFAULT = 2;
