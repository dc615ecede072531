/** The code examples of the documentation (README.md, docs/), for the tests that run them as documented. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../devkit/processes";

/**
 * The one fenced `language` block of `page` (a path from the repository's root, e.g. docs/api.md)
 * that holds `marker`; throws unless there is exactly one.
 */
export function docExample(page: string, language: string, marker: string): string {
  const text = readFileSync(join(ROOT, page), "utf8");
  const blocks = [...text.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes(marker));
  if (found.length !== 1) throw new Error(`${page}: ${found.length} \`\`\`${language} blocks hold ${marker}, not one`);
  return found[0]!;
}
