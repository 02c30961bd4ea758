/** A log line's level (log.ts), and the journal's priority for it (journal.ts): its own file, which both read. */
export type LogLevel = "DEBUG" | "INFO" | "WARN" | "ERROR";
