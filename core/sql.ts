/**
 * SQL text the service writes itself: one statement's runner, and names quoted one way, whoever
 * builds the statement (the stores' drizzle SQL, the access tables' text, Ponder's own tables).
 */

/** One SQL statement with `$n` parameters. */
export type Query = (text: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/** An identifier, quoted: any name, even one holding a double quote. */
export const quoteIdentifier = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/** A schema-qualified table name, quoted. */
export const table = (schema: string, name: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
