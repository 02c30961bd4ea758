import { toolConfig } from "../../tsup.shared.ts";

export default toolConfig("restart-with-warning");
