/**
 * API keys from the command line, through the running service's admin endpoints:
 *
 *   npm run keys -- create --label <name>
 *   npm run keys -- list
 *   npm run keys -- revoke <id>
 *   npm run keys -- webhook create --url <url> [--filter <query>] [--cursor <seq>]
 *   npm run keys -- webhook list | deliveries <id>
 *   npm run keys -- webhook rotate | pause | resume | test | delete <id>
 *   npm run keys -- webhook replay <id> --cursor <seq>
 *
 * SERVICE_URL (default http://127.0.0.1:42069) names the service, ADMIN_TOKEN is its admin token.
 */
import { parseArgs } from "node:util";
import { keysSettings, settingsOrExit } from "../core/settings";

const USAGE = `usage: npm run keys -- create --label <name> | list | revoke <id>
       npm run keys -- webhook create --url <url> [--filter <query>] [--cursor <seq>]
       npm run keys -- webhook list | deliveries <id> | rotate <id> | pause <id> | resume <id> | test <id> | delete <id>
       npm run keys -- webhook replay <id> --cursor <seq>
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
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        label: { type: "string" },
        url: { type: "string" },
        filter: { type: "string" },
        cursor: { type: "string" },
      },
    });
  } catch (error) {
    throw new Failure(`${(error as Error).message}\n${USAGE}`);
  }
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, ...rest] = positionals;
  if (command === "webhook") return webhook(rest, values);
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

type Hook = { id: string; url: string; filter: string; cursor: number; paused: boolean; disabled: string | null };

/** An endpoint on one line: its id, state, cursor, URL and filters. */
const hookLine = (h: Hook) =>
  `${h.id}  ${(h.disabled ? `disabled: ${h.disabled}` : h.paused ? "paused" : "active").padEnd(24)}  after ${
    h.cursor
  }  ${h.url}${h.filter ? `  ${h.filter}` : ""}`;

/** `npm run keys -- webhook ...`: the operator's webhook endpoints (docs/api.md, "Webhooks"). */
async function webhook(args: string[], values: Record<string, string | boolean | undefined>): Promise<void> {
  const [command, id, ...extra] = args;
  if (extra.length > 0) throw new Failure(USAGE);
  const path = `/webhooks/${encodeURIComponent(id ?? "")}`;
  if (command === "create" && id === undefined && typeof values.url === "string") {
    const made = (await admin("POST", "/webhooks", {
      url: values.url,
      filter: values.filter,
      cursor: values.cursor,
    })) as Hook & { secret: string };
    console.log(`${hookLine(made)}
secret: ${made.secret}`);
    console.log("The secret is shown only this once: the receiver verifies each delivery's signature with it.");
  } else if (command === "list" && id === undefined) {
    const hooks = (await admin("GET", "/webhooks")) as Hook[];
    console.log(hooks.length === 0 ? "no webhooks" : hooks.map(hookLine).join("\n"));
  } else if (command === "deliveries" && id !== undefined) {
    const attempts = (await admin("GET", `${path}/deliveries`)) as Record<string, unknown>[];
    for (const a of attempts)
      console.log(`${a.at}  ${a.id}  attempt ${a.attempt}  ${a.status ?? a.error}  ${a.ms} ms  ${a.entries} entries`);
  } else if (command === "rotate" && id !== undefined) {
    const rotated = (await admin("POST", `${path}/rotate`)) as Hook & { secret: string };
    console.log(`${hookLine(rotated)}\nsecret: ${rotated.secret}\nThe old secret also signs for 24 hours.`);
  } else if ((command === "pause" || command === "resume" || command === "test") && id !== undefined) {
    const answer = await admin("POST", `${path}/${command}`);
    console.log(command === "test" ? JSON.stringify(answer) : hookLine(answer as Hook));
  } else if (command === "replay" && id !== undefined && typeof values.cursor === "string") {
    console.log(hookLine((await admin("POST", `${path}/replay`, { cursor: values.cursor })) as Hook));
  } else if (command === "delete" && id !== undefined) {
    console.log(`deleted ${hookLine((await admin("DELETE", path)) as Hook)}`);
  } else {
    throw new Failure(USAGE);
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(error instanceof Failure ? error.message : error);
  process.exitCode = 1;
});
