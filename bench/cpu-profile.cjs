/**
 * Preloaded (NODE_OPTIONS=--require) by bench/profile.ts into `npm run serve`'s processes: node's
 * --cpu-prof, which NODE_OPTIONS does not admit. Each process is profiled from its start, and its
 * profile written to BENCH_CPU_PROFILE_DIR as it exits. CommonJS: --require loads it before any ESM.
 */
const fs = require("node:fs");
const inspector = require("node:inspector");
const path = require("node:path");

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
  // A session in the process's own thread answers at once: the profile is written before it exits.
  process.on("exit", () => {
    session.post("Profiler.stop", (error, result) => {
      if (!error) fs.writeFileSync(path.join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
