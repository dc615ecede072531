/**
 * The shipped deployment's gateway for the tests: Debian's nginx running deploy/nginx.conf, with
 * the test's own upstreams and loopback ports put in, in front of API replicas and the indexer;
 * here, or wherever `run` starts it (another network namespace: test/standby.test.ts).
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { Child, freePort, GiveUp, ROOT, waitFor } from "../../devkit/processes";

const NGINX = "/usr/sbin/nginx";

/** nginx running deploy/nginx.conf: its public and operator's URLs, as this process reaches them. */
export type Gateway = { url: string; operatorUrl: string; stop(): Promise<void> };

export type GatewayOptions = {
  /** The API replicas' URLs: nginx spreads requests over them. */
  api: string[];
  /** The indexer's URL (GraphQL). */
  indexer: string;
  /** Starts `command` with `args` in `cwd` where nginx is to run (default: here). */
  run?: (command: string, args: string[], cwd: string) => Child;
  /** The loopback ports nginx listens on (default: free ones here). */
  ports?: { public: number; operator: number };
  /** The URL this process reaches nginx's loopback `port` at (default: http://127.0.0.1:<port>). */
  reach?: (port: number) => string;
};

/** The upstream group the replicas make: deploy/nginx.conf's `api` replaced by its name. */
const UPSTREAM = "api_replicas";

/**
 * deploy/nginx.conf with the given upstreams and loopback ports in place of compose's, each of the
 * four replaced exactly once (a change to the file that moves them fails here, not silently).
 */
function gatewayConfig(indexer: string, port: number, operatorPort: number): string {
  let text = readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8");
  for (const [from, to] of [
    ["http://api:42070;", `http://${UPSTREAM};`],
    ["http://indexer:42069;", `${indexer};`],
    ["listen 80;", `listen 127.0.0.1:${port};`],
    ["listen 8080;", `listen 127.0.0.1:${operatorPort};`],
  ]) {
    expect(text.split(from!).length - 1, `"${from}" in deploy/nginx.conf`).toBe(1);
    text = text.replace(from!, to!);
  }
  return text;
}

/**
 * Debian's nginx in the foreground, with a prefix, pid, logs and temp files of its own, and the
 * http block of nginx's Docker image (docker-compose.yml's gateway) around the file: a directive
 * that file already sets (keepalive_timeout) would stop nginx here as it does there. The replicas
 * are an upstream group, as the names compose's DNS gives for `api`.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const run = options.run ?? ((command, args, cwd) => new Child(command, args, {}, cwd));
  const reach = options.reach ?? ((port) => `http://127.0.0.1:${port}`);
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install nginx (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), "gateway-"));
  // nginx's workers drop root's privileges (to nobody) and write request bodies under it.
  chmodSync(dir, 0o755);
  const { public: port, operator: operatorPort } = options.ports ?? {
    public: await freePort(),
    operator: await freePort(),
  };
  const servers = options.api.map((url) => `server ${new URL(url).host};`).join(" ");
  writeFileSync(join(dir, "site.conf"), gatewayConfig(options.indexer, port, operatorPort));
  writeFileSync(
    join(dir, "nginx.conf"),
    `pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
worker_processes 1;
events { worker_connections 1024; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log ${dir}/access.log;
  sendfile on;
  keepalive_timeout 65;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream ${UPSTREAM} { ${servers} }
  include site.conf;
}
`,
  );
  const child = run(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], dir);
  const url = reach(port);
  const stop = async () => {
    await child.stop("SIGQUIT");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      "nginx to answer",
      async () => {
        if (!child.running) throw new GiveUp("nginx exited");
        return (await fetch(`${url}/health`).catch(() => undefined))?.status === 200 ? true : undefined;
      },
      20_000,
    );
  } catch (error) {
    const log = existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8") : "";
    await stop();
    throw new Error(`${(error as Error).message}\n--- nginx ---\n${child.output}${log}`);
  }
  return { url, operatorUrl: reach(operatorPort), stop };
}
