import { describe, expect, it } from "vitest";
import { checkBackupAge } from "../src/backup-age.ts";
import type { IdleState } from "../src/decide.ts";

const H = 3_600_000;
const T0 = Date.UTC(2026, 10, 21, 6, 0, 0);
const MAX = 26 * H;

/** Checks every `stepH` hours from T0 to `untilH`; returns the posts with their hour. */
function watch(state: IdleState, untilH: number, options: { stepH?: number; okAtH?: number; failed?: string } = {}) {
  const posts: string[] = [];
  let s = state;
  for (let h = 0; h <= untilH; h += options.stepH ?? 1) {
    if (options.okAtH !== undefined && h >= options.okAtH) s = { ...s, lastBackupOk: T0 + options.okAtH * H };
    const end = options.failed ? { time: T0 + H, failed: options.failed } : undefined;
    const check = checkBackupAge(s, T0 + h * H, MAX, end);
    s = check.state;
    if (check.post) posts.push(`${check.post.kind}@${h}: ${check.post.title}`);
  }
  return { posts, state: s };
}

describe("the staleness alarm", () => {
  it("posts once when the newest backup passes BACKUP_MAX_AGE, again only a period later, and never every check", () => {
    const { posts } = watch({ lastBackupOk: T0 }, 60);
    expect(posts).toEqual(["stale@27: No backup for 27 h", "stale@53: No backup for 53 h"]);
  });

  it("says why: the last run's failure from the log", () => {
    const check = checkBackupAge({ lastBackupOk: T0 }, T0 + 27 * H, MAX, {
      time: T0 + 25 * H,
      failed: "restic: wrong password",
    });
    expect(check.post).toEqual({
      kind: "stale",
      title: "No backup for 27 h",
      description: "The last one failed: restic: wrong password\nBACKUP_MAX_AGE is 26 h 0 min.",
    });
    expect(check.stale).toBe(true);
    expect(check.ageMs).toBe(27 * H);
  });

  it("shows a reason from the volume literally, never as Markdown", () => {
    const check = checkBackupAge({ lastBackupOk: T0 }, T0 + 27 * H, MAX, {
      time: T0,
      failed: "world_nether is *gone*",
    });
    expect(check.post?.description).toMatch(/^The last one failed: world\\_nether is \\\*gone\\\*\n/);
  });

  it("says once that backups run again, and alarms anew after the next gap", () => {
    const { posts } = watch({ lastBackupOk: T0 }, 40, { okAtH: 30 });
    expect(posts).toEqual(["stale@27: No backup for 27 h", "recovered@30: Backups are running again"]);
    const later = watch({ lastBackupOk: T0 }, 100, { okAtH: 30 });
    expect(later.posts).toEqual([
      "stale@27: No backup for 27 h",
      "recovered@30: Backups are running again",
      "stale@57: No backup for 27 h",
      "stale@83: No backup for 53 h",
    ]);
  });

  it("counts from when it first looked when there never was a backup, and says so", () => {
    const { posts, state } = watch({}, 30);
    expect(posts).toEqual(["stale@27: No backup in 27 h of watching"]);
    expect(state.watchingSince).toBe(T0);
  });

  it("posts nothing while the backups are younger than BACKUP_MAX_AGE", () => {
    let s: IdleState = {};
    for (let h = 0; h < 200; h++) {
      s = { ...s, lastBackupOk: T0 + Math.floor(h / 24) * 24 * H };
      expect(checkBackupAge(s, T0 + h * H, MAX).post).toBeUndefined();
      s = checkBackupAge(s, T0 + h * H, MAX).state;
    }
  });
});
