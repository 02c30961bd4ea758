/** Discord's API, the version the Worker and `register` speak: the default of DISCORD_API_URL for both. */
export const DISCORD_API = "https://discord.com/api/v10";
