// Node's part of sitebuild/authoring/drawtime.py: `node drawtime.mjs JOBS PYRUNTIME_JS SITE PY
// BYTECODE` boots the built SITE's Python as the reader's browser does (sitepython.mjs), then, for
// each job of the JSON list in the file JOBS ({model, state, fid}), calls the figure's render with
// that state once and REPEAT times more, as the page calls it on a tap, and prints, as JSON,
// the milliseconds of each call (wall clock, and this process's processor time) or the error
// it raised.

import fs from "node:fs";

import { bootSite } from "./sitepython.mjs";

const REPEAT = Number(process.env.REPEAT || 3);
const [listed, pyruntime, site, py, bytecode] = process.argv.slice(2);
const { call } = await bootSite({ pyruntime, site, py, bytecode });

const jobs = JSON.parse(fs.readFileSync(listed, "utf8"));
const out = [];
for (const { model, state, fid } of jobs) {
  const calls = [];
  try {
    for (let i = 0; i <= REPEAT; i++) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      call(model, [state, fid]);
      const cpu = process.cpuUsage(c0);
      calls.push({ wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 });
    }
    out.push({ calls });
  } catch (e) {
    const lines = String(e && e.message ? e.message : e).trim().split("\n");
    out.push({ calls, error: lines[lines.length - 1] });
  }
}
process.stdout.write(JSON.stringify(out));
