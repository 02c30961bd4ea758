import { toolConfig } from "../../tsup.shared.ts";

export default toolConfig("log-tailer");
