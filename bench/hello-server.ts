/**
 * The ceiling: raw node:http answering "hello", with as many worker processes as `npm run serve`
 * starts (API_WORKERS, default one per core), so that the two compare process for process.
 */
import cluster from "node:cluster";
import { createServer } from "node:http";
import { availableParallelism } from "node:os";

const workers = Number(process.env.API_WORKERS || availableParallelism());

if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
} else {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/plain" });
    res.end("hello");
  });
  // As scripts/serve.ts: connections stay open between requests.
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT), "127.0.0.1");
}
