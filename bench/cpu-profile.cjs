/**
 * Preloaded (NODE_OPTIONS=--require) by bench/profile.ts into `npm run serve`'s processes: node's
 * CPU profiler, which NODE_OPTIONS cannot start with --cpu-prof. Each process is profiled from its
 * start, and writes its profile to BENCH_CPU_PROFILE_DIR when asked with SIGUSR2: profile.ts asks
 * once its load is over, since a server stopped with a long request in flight (a batch) could be
 * killed before its exit handlers ran. CommonJS: --require loads it before any ESM.
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
  // Which processes to ask: those that have this handler.
  fs.writeFileSync(path.join(dir, `${process.pid}.profiling`), "");
  let asked = false;
  // Once: a wrapper (npm, tsx) that passes the signal on would otherwise stop a stopped profiler.
  process.on("SIGUSR2", () => {
    if (asked) return;
    asked = true;
    session.post("Profiler.stop", (error, result) => {
      const file = path.join(dir, `${process.pid}.cpuprofile`);
      // Renamed into place whole: profile.ts reads it as soon as it exists.
      fs.writeFileSync(`${file}.part`, error ? "{}" : JSON.stringify(result.profile));
      fs.renameSync(`${file}.part`, file);
    });
  });
}
