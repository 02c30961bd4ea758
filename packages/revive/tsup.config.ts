import { toolConfig } from "../../tsup.shared.ts";

export default toolConfig("revive", { hibernate: "src/hibernate-cli.ts" });
