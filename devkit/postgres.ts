import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitFor } from "./processes";

export type PrivatePostgres = {
  url: string;
  port: number;
  /** Stops the server (fast shutdown: clients are disconnected). */
  stop(): void;
  /** Starts it again, on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  destroy(): void;
};

/** Debian's server binaries, newest version first. */
export function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  const dir = versions.map((v) => `/usr/lib/postgresql/${v}/bin`).find((d) => existsSync(join(d, "pg_ctl")));
  if (!dir) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)");
  return dir;
}

/** The postgres user's ids, for the directories it is to own (Postgres refuses to run as root). */
export const postgresUser = () => ({
  uid: Number(execFileSync("id", ["-u", "postgres"]).toString()),
  gid: Number(execFileSync("id", ["-g", "postgres"]).toString()),
});

/**
 * A PostgreSQL server of the caller's own, on loopback and a free port, that it may stop and start
 * (the shared one serves every other test file). It runs as the postgres user, as Postgres refuses
 * to run as root. `settings`: its own, on the command line. Given `standbyOf`, it is a hot standby of
 * that server, made by `pg_basebackup -R` (initdb's trust rules let loopback stream the WAL).
 */
export async function startPrivatePostgres(
  options: { settings?: Record<string, string>; standbyOf?: PrivatePostgres } = {},
): Promise<PrivatePostgres> {
  const bin = binDir();
  const root = mkdtempSync(join(tmpdir(), "private-pg-"));
  chmodSync(root, 0o755);
  const data = join(root, "data");
  const port = await freePort();
  const asPostgres = (args: string[]) => {
    const user = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
    const [command, ...rest] = [...user, ...args];
    return execFileSync(command!, rest, { stdio: "pipe", cwd: root }).toString();
  };
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUser();
    chownSync(root, uid, gid);
  }
  const primary = options.standbyOf;
  if (primary) {
    const from = ["-h", "127.0.0.1", "-p", String(primary.port), "-U", "postgres"];
    asPostgres([join(bin, "pg_basebackup"), ...from, "-D", data, "-R", "-X", "stream"]);
  } else {
    asPostgres([join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  }
  const own = Object.entries(options.settings ?? {}).map(([name, value]) => ` -c ${name}=${value}`);
  const start = async () => {
    asPostgres([
      join(bin, "pg_ctl"),
      "-D",
      data,
      "-l",
      join(root, "log"),
      "-w",
      "-o",
      `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off${own.join("")}`,
      "start",
    ]);
    await waitFor(
      "the private Postgres",
      async () => {
        execFileSync(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port)], { stdio: "pipe" });
        return true;
      },
      30_000,
    );
  };
  const stop = () => {
    try {
      asPostgres([join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"]);
    } catch {
      // Already stopped.
    }
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    destroy: () => {
      stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
