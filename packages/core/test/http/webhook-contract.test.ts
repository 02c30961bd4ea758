/**
 * The notifier's schema held to Discord's real error bodies (testkit test/contracts/discord, copied from
 * discord/discord-api-docs and discord-api-spec): a 400 with the nested 50035 errors, a 404 10015, a 401, a 429 with
 * retry_after and global. A schema that asks for more than Discord sends fails here, with the tool's own line.
 */
import { bodiesRead, realExchanges } from "@mcops/testkit";
import { describe, expect, it } from "vitest";
import { discordErrorSchema } from "../../src/http/notifier.ts";
import { checkShape } from "../../src/http/request.ts";

/**
 * The notifier posts to the webhook and reads only a failure's body (a 2xx is not read): on /api/v10/webhooks/… for
 * an address without a version (@mcops/core/discord), on the address's own path for one with a version.
 */
const DISCORD_READS = [
  {
    name: "discordErrorSchema",
    schema: discordErrorSchema,
    method: "POST",
    path: "/api/webhooks/{webhook.id}/{webhook.token}",
    answers: "failure",
  },
  {
    name: "discordErrorSchema",
    schema: discordErrorSchema,
    method: "POST",
    path: "/api/v{version}/webhooks/{webhook.id}/{webhook.token}",
    answers: "failure",
  },
] as const;

describe("the notifier's schema and Discord's real answers", () => {
  const { cases, unmatched } = bodiesRead(realExchanges("discord"), DISCORD_READS);

  it("has a real body for every row of the table", () => {
    expect(unmatched).toEqual([]);
  });

  it("reads the errors the notifier explains: 400 50035, 404 10015, 401, 429 with retry_after and global", () => {
    const read = cases.map(([, , real]) => real.response.body as Record<string, unknown>);
    expect(read.map((body) => body.code)).toEqual(expect.arrayContaining([50035, 10015, 50027]));
    expect(read.some((body) => typeof body.retry_after === "number" && body.global === true)).toBe(true);
    expect(read.some((body) => typeof body.retry_after === "number" && body.global === false)).toBe(true);
  });

  it.each(cases)("%s", (_name, read, real) => {
    const check = () =>
      checkShape(read.schema, real.response.body, { service: "Discord", route: "POST /api/webhooks" });
    expect(check, `${real.name} (real answer from ${real.source})`).not.toThrow();
  });
});
