/**
 * The Postgres roles API replicas (`npm run serve`) connect as, made by the indexer's own role (which
 * owns every table) before Ponder starts, so that a replica holds no more than it needs:
 *
 * - the reader (REPLICA_DATABASE_URL's user): SELECT on the tables of the indexer's schema and of the
 *   views schema, now and later (default privileges: Ponder makes its tables and views after this),
 *   every transaction read-only; nothing of the access schema (the keys' hashes).
 * - the access role (REPLICA_ACCESS_DATABASE_URL's user): SELECT, INSERT, UPDATE and DELETE on the
 *   access schema's tables (keys, their usage, the keyless budget), now and later; no CREATE, so the
 *   replicas leave the migrations to the indexer (api/database/db.ts).
 *
 * The schemas are made here if missing (Ponder and the access tables make them IF NOT EXISTS too).
 * A role is made, or its password set to the URL's; a superuser or the indexer's own role is refused.
 */
import { pgAccessDb } from "../../api/database/pg";
import type { LauncherSettings, RoleLogin } from "../../core/settings";
import { type Query, quoteIdentifier } from "../../core/sql";

/** Makes (or updates) the role, with LOGIN and the password; refuses one that must not be a replica's. */
async function login(query: Query, role: RoleLogin): Promise<void> {
  const { rows } = await query("SELECT rolsuper, rolname = current_user AS own FROM pg_roles WHERE rolname = $1", [
    role.name,
  ]);
  if (rows[0]?.own === true || rows[0]?.rolsuper === true) {
    const what = rows[0].own === true ? "the indexer's own role" : "a superuser";
    throw new Error(`${role.name} is ${what}: an API replica must connect as a role of its own`);
  }
  // The password as a literal quoted by the server: a utility statement takes no parameters.
  const verb = rows.length === 0 ? "CREATE ROLE %I LOGIN PASSWORD %L" : "ALTER ROLE %I WITH LOGIN PASSWORD %L";
  const made = await query("SELECT format($1, $2::text, $3::text) AS statement", [verb, role.name, role.password]);
  await query(made.rows[0]!.statement as string);
}

/** What a replica's role may do: its login, the schemas whose tables it uses, and how. */
type Grant = { role: RoleLogin; schemas: string[]; privileges: string; readOnly: boolean };

/** Makes the role and grants it `privileges` on `schemas`' tables: those there and those this role makes later. */
async function grant(query: Query, database: string, { role, schemas, privileges, readOnly }: Grant): Promise<void> {
  await login(query, role);
  const name = quoteIdentifier(role.name);
  if (readOnly) await query(`ALTER ROLE ${name} SET default_transaction_read_only = on`);
  await query(`GRANT CONNECT ON DATABASE ${quoteIdentifier(database)} TO ${name}`);
  for (const schema of schemas) await query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
  const names = schemas.map(quoteIdentifier).join(", ");
  await query(`GRANT USAGE ON SCHEMA ${names} TO ${name}`);
  await query(`GRANT ${privileges} ON ALL TABLES IN SCHEMA ${names} TO ${name}`);
  await query(`ALTER DEFAULT PRIVILEGES IN SCHEMA ${names} GRANT ${privileges} ON TABLES TO ${name}`);
}

/** Makes the replicas' roles named in the settings (none: does nothing), in one transaction. */
export async function makeReplicaRoles(
  settings: Pick<LauncherSettings, "database" | "schema" | "viewsSchema" | "access" | "replicaRoles"> & {
    /**
     * What the reader reads where chains are indexed apart (scripts/launcher/apart.ts): each chain's
     * schema and views schema; else `schema` and `viewsSchema`.
     */
    readSchemas?: string[];
  },
): Promise<void> {
  const { reader, access } = settings.replicaRoles;
  const grants: Grant[] = [];
  if (reader)
    grants.push({
      role: reader,
      schemas: settings.readSchemas ?? [settings.schema, settings.viewsSchema],
      privileges: "SELECT",
      readOnly: true,
    });
  if (access) {
    const privileges = "SELECT, INSERT, UPDATE, DELETE";
    grants.push({ role: access, schemas: [settings.access.schema], privileges, readOnly: false });
  }
  const url = settings.database.url;
  if (grants.length === 0 || url === undefined) return;
  const db = pgAccessDb(url, { applicationName: "delegation-lookup roles", max: 1 });
  try {
    await db.transaction(async (query) => {
      // Indexers starting together on one server would otherwise race to make the same role.
      await query("SELECT pg_advisory_xact_lock(hashtext('delegation-lookup replica roles'))");
      const { rows } = await query("SELECT current_database() AS name");
      for (const each of grants) await grant(query, rows[0]!.name as string, each);
    });
  } finally {
    await db.close();
  }
}
