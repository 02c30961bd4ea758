import { toolConfig } from "../../tsup.shared.ts";

export default toolConfig("certs");
