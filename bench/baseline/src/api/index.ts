import { Hono } from "hono";

/** Ponder requires an API; the baseline serves only Ponder's own /ready and /status. */
export default new Hono();
