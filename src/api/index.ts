import { getTableConfig } from "drizzle-orm/pg-core";
import { db } from "ponder:api";
import { v2Delegation } from "ponder:schema";
import { createApp } from "../../api/app";
import { createSqlStore } from "../../api/store";
import { configuredChains } from "../../core/chains";

// Ponder sets every table's schema to the one this instance was started with (--schema).
const schema = getTableConfig(v2Delegation).schema ?? "public";

export default createApp({
  store: createSqlStore((query) => db.execute(query), schema),
  chains: configuredChains().map((chain) => chain.id),
});
