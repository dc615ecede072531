import { db } from "ponder:api";
import { createApp } from "../../api/app";
import { createSqlStore } from "../../api/store";
import { configuredChains } from "../../core/chains";

// Ponder's read-only connection has the deployment schema on its search_path.
export default createApp({
  store: createSqlStore((query) => db.execute(query)),
  chains: configuredChains().map((chain) => chain.id),
});
