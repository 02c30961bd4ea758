/**
 * An image reference's parts as Docker splits them (distribution/reference: `[host[:port]/]path[:tag][@digest]`, the
 * tag after the last `/`): `ghcr.io/pterodactyl/yolks:java_21` → repository `ghcr.io/pterodactyl/yolks`, tag
 * `java_21`. Neither tag nor digest: Docker's `latest` (reference.TagNameOnly) is the caller's to add.
 */
export function imageParts(image: string): { repository: string; tag?: string; digest?: string } {
  const at = image.indexOf("@");
  const named = at < 0 ? image : image.slice(0, at);
  const digest = at < 0 ? undefined : image.slice(at + 1);
  const colon = named.indexOf(":", named.lastIndexOf("/") + 1);
  const repository = colon < 0 ? named : named.slice(0, colon);
  const tag = colon < 0 ? undefined : named.slice(colon + 1);
  return { repository, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}
