import { PGlite } from "@electric-sql/pglite";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeyStore, openKeyStore } from "../access/keys";
import type { AccessDb } from "../database/db";
import { pgliteDb } from "../database/pglite";
import { Problem } from "../http/problem";
import { admin } from "./admin";

let db: AccessDb;
let keys: KeyStore;
/** The admin endpoints over a real key store (PGlite: Postgres's rules for text), problems answered as the app does. */
let app: Hono;
const bearer = { Authorization: "Bearer token", "Content-Type": "application/json" };

beforeAll(async () => {
  db = pgliteDb(await PGlite.create());
  keys = await openKeyStore(db, "access");
  app = new Hono()
    .route("/admin", admin(keys, "token"))
    .onError((error) => (error instanceof Problem ? error.response() : Response.json(String(error), { status: 500 })));
});

afterAll(async () => {
  await keys?.close();
  await db?.close();
});

const problemOf = async (res: Response) => ({ status: res.status, body: await res.json() });

describe("the admin endpoints", () => {
  it("refuse a label holding NUL, which Postgres's text cannot hold (fuzz SEED=5)", async () => {
    const res = await app.request("/admin/keys", { method: "POST", headers: bearer, body: '{"label":"a\\u0000b"}' });
    expect(await problemOf(res)).toMatchObject({ status: 400, body: { code: "invalid_parameter", param: "label" } });
    expect(await keys.list()).toEqual([]);
    const made = await app.request("/admin/keys", { method: "POST", headers: bearer, body: '{"label":"a\\u0001b"}' });
    expect(made.status).toBe(201);
  });

  it("answer 404 for a key id holding NUL, which no id can hold (fuzz SEED=4)", async () => {
    for (const id of ["a%00b", "%00"]) {
      const res = await app.request(`/admin/keys/${id}`, { method: "DELETE", headers: bearer });
      expect(await problemOf(res), id).toMatchObject({ status: 404, body: { code: "not_found" } });
    }
    const [made] = await keys.list();
    const revoked = await app.request(`/admin/keys/${made!.id}`, { method: "DELETE", headers: bearer });
    expect(revoked.status).toBe(200);
  });
});
