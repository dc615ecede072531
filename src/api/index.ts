import { db } from "ponder:api";
import { v2Delegation } from "ponder:schema";
import { getTableConfig } from "drizzle-orm/pg-core";
import { openAccess } from "../../api/access/open";
import { createApp } from "../../api/app";
import { answerClientErrorsOnNewServers } from "../../api/client-error";
import { publishServedChains } from "../../api/served-chains";
import { createSqlStore } from "../../api/store";
import { plan } from "../../ponder.config";
import { logBackfillProgress } from "./progress";

// Ponder sets every table's schema to the one this instance was started with (--schema).
const schema = getTableConfig(v2Delegation).schema ?? "public";

const chains = plan.map(({ chain, v1, v2 }) => ({
  id: chain.id,
  name: chain.name,
  title: chain.title,
  testnet: chain.testnet,
  v1,
  v2,
}));
// Keys and keyless windows live in the service's own tables: Ponder's db handle here is read-only.
const access = await openAccess(process.env);
// API processes run apart from this one (npm run serve) serve the chains it indexes.
await publishServedChains(access.db, access.schema, schema, chains);

// Ponder's server, created after this loads, answers what Node's parser refuses as replicas do.
answerClientErrorsOnNewServers();

export default createApp({ store: createSqlStore((query) => db.execute(query), schema), chains, access });

logBackfillProgress(plan.map((p) => p.chain.name));
