/**
 * API keys from the command line, through the running service's admin endpoints:
 *
 *   npm run keys -- create --label <name>
 *   npm run keys -- list
 *   npm run keys -- revoke <id>
 *
 * SERVICE_URL (default http://127.0.0.1:42069) names the service, ADMIN_TOKEN is its admin token.
 */
import { parseArgs } from "node:util";
import { keysSettings, settingsOrExit } from "../core/settings";

const USAGE = `usage: npm run keys -- create --label <name> | list | revoke <id>
  env: SERVICE_URL (default http://127.0.0.1:42069), ADMIN_TOKEN (the service's admin token)`;

type Key = { id: string; label: string; createdAt: string; revokedAt: string | null; recentRequests: number };

class Failure extends Error {}

const { serviceUrl: base, adminToken: token } = settingsOrExit(() => keysSettings(process.env));

/** The service's answer to `method path` under /admin, parsed; a Failure saying why when there is none. */
async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  if (!token) throw new Failure("ADMIN_TOKEN is not set: set it to the service's admin token");
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${base}/admin${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: Error) => {
    throw new Failure(
      `cannot reach the service at ${base}: ${(error.cause as Error | undefined)?.message ?? error.message}`,
    );
  });
  const data = (await res.json().catch(() => undefined)) as { detail?: string } | undefined;
  if (!res.ok) throw new Failure(`${res.status}: ${data?.detail ?? res.statusText}`);
  return data;
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: { label: { type: "string" } } });
  } catch (error) {
    throw new Failure(`${(error as Error).message}\n${USAGE}`);
  }
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, ...rest] = positionals;
  if (command === "create" && rest.length === 0 && values.label !== undefined) {
    const key = (await admin("POST", "/keys", { label: values.label })) as Key & { key: string };
    console.log(`id:      ${key.id}\nlabel:   ${key.label}\ncreated: ${key.createdAt}\nkey:     ${key.key}`);
    console.log("The key is shown only this once: store it now. Clients send it as the X-API-KEY header.");
  } else if (command === "list" && rest.length === 0 && values.label === undefined) {
    const keys = (await admin("GET", "/keys")) as Key[];
    if (keys.length === 0) console.log("no keys");
    for (const key of keys) {
      const status = key.revokedAt ? `revoked ${key.revokedAt}` : "active";
      const requests = `${String(key.recentRequests).padStart(9)} requests/24h`;
      console.log(`${key.id}  ${key.createdAt}  ${status.padEnd(32)}  ${requests}  ${key.label}`);
    }
  } else if (command === "revoke" && rest.length === 1 && values.label === undefined) {
    const key = (await admin("DELETE", `/keys/${encodeURIComponent(rest[0]!)}`)) as Key;
    console.log(`revoked ${key.id} (${key.label}) at ${key.revokedAt}`);
  } else {
    throw new Failure(USAGE);
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(error instanceof Failure ? error.message : error);
  process.exitCode = 1;
});
