import { VM_HEADERS } from "@mcops/core/vm-signature";
import type { ServerControl } from "./control.ts";
import { boundedText, DEFERRED, json, outOfScope, PONG, readInteraction, reply, verifyInteraction } from "./discord.ts";
import type { Env } from "./env.ts";

export { ServerControl } from "./control.ts";

/**
 * The Worker (issue 19): Discord's interactions at POST /interactions, the VM's signed requests at POST /vm/heartbeat
 * and POST /vm/hibernate. Everything about the server lives in one Durable Object per server (control.ts); this
 * part only checks who is asking and answers Discord within its 3 seconds.
 */
export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (request.method === "POST" && pathname === "/interactions") return interactions(request, env);
    if (request.method === "POST" && (pathname === "/vm/heartbeat" || pathname === "/vm/hibernate")) {
      return vm(request, env, pathname === "/vm/heartbeat" ? "heartbeat" : "hibernate");
    }
    if (request.method === "GET" && pathname === "/") return new Response("mcops discord-control\n");
    return new Response("not found\n", { status: 404 });
  },
} satisfies ExportedHandler<Env>;

/** The server's Durable Object: one per play host (the namespace is ServerControl's, as wrangler.toml binds it). */
function control(env: Env): DurableObjectStub<ServerControl> {
  return env.CONTROL.get(env.CONTROL.idFromName(env.SERVER_ADDR));
}

async function interactions(request: Request, env: Env): Promise<Response> {
  const body = await boundedText(request);
  if (body === undefined) return new Response("too large\n", { status: 413 });
  const now = Math.floor(Date.now() / 1000);
  if (!(await verifyInteraction(env.DISCORD_PUBLIC_KEY, body, request.headers, now))) {
    return new Response("invalid request signature\n", { status: 401 });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return new Response("not JSON\n", { status: 400 });
  }
  const interaction = readInteraction(parsed);
  if (!interaction) return new Response("not an interaction\n", { status: 400 });
  if (interaction.type === 1) return json({ type: PONG });
  if (interaction.type !== 2) return reply("This application only answers its slash commands.", { private: true });
  // Only the group's guild (a DM, another guild or a user install hear nothing of the server), and each interaction
  // once: a captured one sent again within the 5 minutes its signature is good for is refused.
  const elsewhere = outOfScope(interaction, env.GUILD_ID);
  if (elsewhere) return reply(elsewhere, { private: true });
  if (!(await control(env).firstSeen(interaction.id))) {
    return reply("This interaction was answered already.", { private: true });
  }
  return command(interaction, env);
}

async function command(interaction: NonNullable<ReturnType<typeof readInteraction>>, env: Env): Promise<Response> {
  const roles = interaction.roles;
  const has = (role: string | undefined) => role !== undefined && role !== "" && (roles?.includes(role) ?? false);
  switch (interaction.command) {
    case "status":
      return reply(await control(env).status());
    case "start": {
      if (!has(env.START_ROLE) && !has(env.ADMIN_ROLE)) {
        return reply(refusal(roles, "start the server", env.START_ROLE), { private: true });
      }
      const answer = await control(env).start(interaction.token, interaction.user);
      return answer.deferred ? json({ type: DEFERRED }) : reply(answer.content);
    }
    case "stop": {
      if (!has(env.ADMIN_ROLE)) return reply(refusal(roles, "stop the server", env.ADMIN_ROLE), { private: true });
      return reply(await control(env).stop(interaction.token, interaction.user, interaction.options.force === true));
    }
    default:
      return reply(`Unknown command /${interaction.command}: run \`discord-control register\` again.`, {
        private: true,
      });
  }
}

/** Why a member may not: the role it takes (a role mention, which pings nobody), or that it is a guild command. */
function refusal(roles: string[] | undefined, what: string, role: string | undefined): string {
  if (roles === undefined) return `Use this in the group's Discord server to ${what}.`;
  if (!role) return `Nobody may ${what} from Discord: the Worker has no role set for it.`;
  return `You need the <@&${role}> role to ${what}.`;
}

async function vm(request: Request, env: Env, kind: "heartbeat" | "hibernate"): Promise<Response> {
  const body = await boundedText(request);
  if (body === undefined) return new Response("too large\n", { status: 413 });
  const headers = {
    timestamp: request.headers.get(VM_HEADERS.timestamp),
    signature: request.headers.get(VM_HEADERS.signature),
  };
  const answer = await control(env).fromVm(kind, body, headers);
  return new Response(answer.json, { status: answer.status, headers: { "content-type": "application/json" } });
}
