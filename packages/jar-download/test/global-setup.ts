import { compileTestInstaller } from "@mcops/testkit";

/** The test installer compiled once before any test: javac's seconds on a fresh machine are not spent in a test's limit. */
export default function setup(): void {
  compileTestInstaller();
}
