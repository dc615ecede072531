/**
 * Postgres streaming replication between the tests' hosts (netns.ts): a primary in one host and a
 * hot standby made from it by `pg_basebackup -R` in another. Each is a server of Debian's binaries,
 * run as the postgres user (Postgres refuses root), in a temporary directory of its own that holds
 * its data, its log and its Unix socket, by which the test reaches it from its own namespace.
 */
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { binDir, postgresUser } from "../../devkit/postgres";
import type { Lan } from "./netns";

const PORT = 5432;

/** A server in a host of the LAN, listening there on its loopback and LAN addresses (port 5432). */
export class Server {
  private constructor(
    private readonly lan: Lan,
    readonly host: string,
    /** Its directory: data/, log, and the Unix socket. */
    readonly dir: string,
    /** Settings of its own, over those every server here has. */
    private readonly own: Record<string, string> = {},
  ) {}

  /** Runs a Postgres program as the postgres user, in the server's host, to its end. */
  private as(program: string, args: string[]): string {
    return this.lan.exec(this.host, "runuser", ["-u", "postgres", "--", join(binDir(), program), ...args], this.dir);
  }

  /** A new directory for a server in `host`, owned by the postgres user. */
  private static made(lan: Lan, host: string, own?: Record<string, string>): Server {
    const dir = mkdtempSync(join(tmpdir(), `pg-${host}-`));
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    return new Server(lan, host, dir, own);
  }

  get data(): string {
    return join(this.dir, "data");
  }

  /** Starts it (the settings on the command line: a standby's copy of the primary's files holds none of them). */
  start(): void {
    const settings = {
      listen_addresses: `127.0.0.1,${this.lan.address(this.host)}`,
      port: PORT,
      unix_socket_directories: this.dir,
      // A test's data: losing it in a crash of this machine costs nothing.
      fsync: "off",
      wal_level: "replica",
      max_wal_senders: 8,
      max_replication_slots: 8,
      hot_standby: "on",
      ...this.own,
    };
    const options = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`);
    this.as("pg_ctl", [
      "-D",
      this.data,
      "-l",
      join(this.dir, "log"),
      "-w",
      "-t",
      "60",
      "-o",
      options.join(" "),
      "start",
    ]);
  }

  /** Stops it: `fast` disconnects its clients and shuts down; `immediate` is a crash. */
  stop(mode: "fast" | "immediate"): void {
    this.as("pg_ctl", ["-D", this.data, "-m", mode, "-w", "stop"]);
  }

  /** Makes a standby a primary of its own (it stops following its primary). */
  promote(): void {
    this.as("pg_ctl", ["-D", this.data, "-w", "promote"]);
  }

  /** Rows of `text`, asked as the postgres user over the Unix socket. */
  async query(text: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ host: this.dir, port: PORT, user: "postgres", database: "postgres" });
    await client.connect();
    try {
      return (await client.query(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** The last `chars` of its log (by default enough for a failure's message). */
  log(chars = 3_000): string {
    const path = join(this.dir, "log");
    return existsSync(path) ? readFileSync(path, "utf8").slice(-chars) : "";
  }

  /** Crashes it, if it runs, and deletes its directory. */
  destroy(): void {
    try {
      this.stop("immediate");
    } catch {
      // Not running.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * A primary in `host`: trusted on its loopback, by password (scram) from the LAN, where
   * `replicator` (with its password) may stream its WAL. `own`: settings of its own.
   */
  static async primary(
    lan: Lan,
    host: string,
    replicator: { name: string; password: string },
    own?: Record<string, string>,
  ): Promise<Server> {
    const server = Server.made(lan, host, own);
    try {
      server.as("initdb", ["-D", server.data, "-A", "trust", "-U", "postgres", "--no-sync"]);
      const rules = [`host all all ${lan.subnet()}`, `host replication ${replicator.name} ${lan.subnet()}`];
      appendFileSync(join(server.data, "pg_hba.conf"), rules.map((rule) => `${rule} scram-sha-256\n`).join(""));
      server.start();
      await server.query(`CREATE ROLE ${replicator.name} REPLICATION LOGIN PASSWORD '${replicator.password}'`);
      return server;
    } catch (error) {
      const log = server.log();
      server.destroy();
      throw new Error(`${(error as Error).message}\n--- primary's log ---\n${log}`);
    }
  }

  /**
   * A hot standby in `host`, made by `pg_basebackup -R` from the primary `conninfo` names (as the
   * replicator), streaming through replication slot `slot`, which it makes: the primary keeps the
   * WAL the standby has not received, so a standby down for a while catches up whole. `own`:
   * settings of its own (on the command line: its files are the primary's copy).
   */
  static async standby(
    lan: Lan,
    host: string,
    conninfo: string,
    slot: string,
    own?: Record<string, string>,
  ): Promise<Server> {
    const server = Server.made(lan, host, own);
    try {
      server.as("pg_basebackup", ["-d", conninfo, "-D", server.data, "-R", "-X", "stream", "-C", "-S", slot]);
      server.start();
      return server;
    } catch (error) {
      const log = server.log();
      server.destroy();
      throw new Error(`${(error as Error).message}\n--- standby's log ---\n${log}`);
    }
  }
}
