/** The README's code examples, for the tests that run them as documented. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../devkit/processes";

/** The README's one fenced `language` block that holds `marker`; throws unless there is exactly one. */
export function readmeExample(language: string, marker: string): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const blocks = [...readme.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes(marker));
  if (found.length !== 1) throw new Error(`README: ${found.length} \`\`\`${language} blocks hold ${marker}, not one`);
  return found[0]!;
}
