#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// `ddmc ui` end to end: a VM (minivm running Ui.mvm, or HotSpot running UiProg.java under
// libddmcjdwp.so), `ddmc ui` on it, and Debian's headless Chromium driven by playwright-core
// (from the build's npm packages, never a browser of its own). Checks:
//   security  the server listens on 127.0.0.1 only; without the token, with a wrong one, or with a
//             foreign Host header a request gets 403; a path out of the web directory gets 404
//   pages     each loads with no console error; VMs shows the VM connected; the thread table
//             changes as Workers start and end, a click shows the thread's stack; the heap chart
//             has points (and, on minivm, the heap map draws); the allocation tracker lists the
//             Worker's int[]; a sampling flame graph's hot path ends in the hot method, which tops
//             the methods by exclusive time
//   downloads each page's download links (the browser's download event), read back by the
//             consumers tests/exports uses (check_exports.mjs): the Threads page's Perfetto JSON
//             by Chrome DevTools' trace engine, the allocations' pprof by protobufjs against
//             pprof's profile.proto, the trace's speedscope file by speedscope's schema, its pprof,
//             and its collapsed stacks the very text the flame graph was drawn from
//   shots     a screenshot of each page in --out, each with many colours (not blank)
//   --all     (tests/adb/run_e2e.py ui: VMs under the adbd stand-in and a real adb server) `ddmc -p A
//             ui --all`: -p's VM is shown first; the VMs page lists the VMs adb knows, the zygote
//             waiting for a debugger, the held one attached; a VM started later appears, a click shows it on the other
//             pages (its threads), killed it leaves the list; a click on A shows A again
// Usage: ui_test.js --ddmc DDMC --out DIR --proto PROFILE.proto (--minivm MINIVM --program Ui.mvm
//        | --agent AGENT.so --java-src UiProg.java), or ui_test.js --ddmc DDMC --out DIR --adb-port P
//        --serial S --control SOCKET --minivm MINIVM --programs DIR --pids A,Z,H (A: idle.mvm, Z:
//        zygote.mvm, H: idle.mvm held by a debugger, all under adb). Every process started here is
//        killed when it ends.
"use strict";
const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const http = require("http");
const net = require("net");
const path = require("path");

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const children = [];
const failures = [];
let passed = 0;
const log = (m) => console.log(`[ui ${new Date().toISOString().slice(11, 19)}] ${m}`);
function check(cond, what, detail) {
  if (cond) { passed++; log(`ok   ${what}`); } else { failures.push(what); log(`FAIL ${what}${detail ? ": " + detail : ""}`); }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function cleanup() { for (const c of children) try { process.kill(c.pid, "SIGKILL"); } catch (e) { /* gone */ } }
process.on("exit", cleanup);
process.on("SIGTERM", () => { cleanup(); process.exit(1); });

// Starts cmd and resolves with the first match of re in its output (within ms).
function startAndWait(cmd, argv, re, ms, logPath) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
    children.push(p);
    const out = fs.createWriteStream(logPath);
    let text = "", done = false;
    const t = setTimeout(() => { if (!done) { done = true; reject(new Error(`${cmd}: no ${re} in ${ms} ms:\n${text.slice(-2000)}`)); } }, ms);
    const feed = (d) => {
      out.write(d);
      text += d.toString();
      const m = text.match(re);
      if (m && !done) { done = true; clearTimeout(t); resolve({ proc: p, m }); }
    };
    p.stdout.on("data", feed);
    p.stderr.on("data", feed);
    p.on("exit", (code) => { if (!done) { done = true; clearTimeout(t); reject(new Error(`${cmd} exited ${code}:\n${text.slice(-2000)}`)); } });
  });
}

async function startVm() {
  if (args.minivm) {
    // A port named rather than address=...:0: the test starts the VM again on the same port after
    // killing it.
    const port = await new Promise((resolve) => {
      const srv = net.createServer().listen(0, "127.0.0.1", () => { const p = srv.address().port; srv.close(() => resolve(p)); });
    });
    const r = await startAndWait(args.minivm, [`-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:${port},server=y,suspend=n`,
      args.program], /JDWP listening on [^:]+:(\d+)/, 20000, path.join(args.out, "vm.out"));
    return { port: r.m[1], hot: "Ui.hot", heapMap: true, traceMode: "1000", traceClock: "wall", proc: r.proc };
  }
  const classes = path.join(args.out, "classes");
  fs.mkdirSync(classes, { recursive: true });
  execFileSync("javac", ["-g", "-d", classes, args["java-src"]]);
  const r = await startAndWait("java", [`-agentpath:${path.resolve(args.agent)}=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0`,
    "-cp", classes, "UiProg"], /Listening for transport dt_socket at address: (\d+)/, 30000, path.join(args.out, "vm.out"));
  // Method tracing on HotSpot: on this machine the agent's sampling (SPSS) showed neither the Busy
  // thread nor hot() under work() (even with hot() kept out of line), so the flame graph is
  // checked on a method trace (MPSS) instead. In thread CPU time: in wall time, on a loaded
  // machine (CI runs two tests at once), Busy lost the CPU between two calls of hot() far more
  // often than inside one, and busy() itself had 36-45% of the wall time (0.2% on a quiet
  // machine, 1% of the CPU time either way).
  return { port: r.m[1], hot: "UiProg.hot", heapMap: false, traceMode: "0", traceClock: "cpu" };
}

function get(port, p, headers) {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", port, path: p, headers: headers || {} }, (res) => {
      let body = "";
      res.on("data", (d) => { if (body.length < 4096) body += d; });
      res.on("end", () => resolve({ status: res.statusCode, body }));
    });
    req.on("error", (e) => resolve({ status: 0, body: String(e) }));
    req.setTimeout(10000, () => req.destroy());
    req.end();
  });
}

function connects(host, port) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port }, () => { s.destroy(); resolve(true); });
    s.on("error", () => resolve(false));
    s.setTimeout(3000, () => { s.destroy(); resolve(false); });
  });
}

// The listening socket's local address, from /proc/net/tcp (hex, little-endian IPv4).
function listenAddresses(port) {
  const hexPort = Number(port).toString(16).toUpperCase().padStart(4, "0");
  const lines = fs.readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1);
  const v6 = fs.existsSync("/proc/net/tcp6") ? fs.readFileSync("/proc/net/tcp6", "utf8").split("\n").slice(1) : [];
  return [...lines, ...v6].map((l) => l.trim().split(/\s+/)).filter((f) => f[1] && f[1].endsWith(":" + hexPort) && f[3] === "0A")
    .map((f) => f[1].split(":")[0]);
}

async function securityChecks(base, port, token) {
  check((await get(port, "/")).status === 403, "no token: 403");
  check((await get(port, "/api/state")).status === 403, "no token on the API: 403");
  check((await get(port, "/?token=" + "0".repeat(48))).status === 403, "a wrong token: 403");
  check((await get(port, "/?token=" + token.slice(0, 47))).status === 403, "a token one digit short: 403");
  check((await get(port, "/", { "X-Ddmc-Token": token })).status === 200, "the token as a header: 200");
  check((await get(port, `/?token=${token}`, { Host: `evil.example:${port}` })).status === 403, "a foreign Host: 403");
  const trav = await get(port, `/static/..%2f..%2f..%2fetc%2fpasswd?token=${token}`);
  check(trav.status === 404 && !trav.body.includes("root:"), "a path out of the web directory: 404", trav.status);
  check((await get(port, `/static/.hidden?token=${token}`)).status === 404, "a dot file: 404");
  check((await get(port, "/api/export/trace.pb")).status === 403, "a download without the token: 403");
  check((await get(port, `/api/export/trace.pb?token=${token}`)).status === 404, "a trace download before any trace: 404");
  check((await get(port, `/api/export/passwd?token=${token}`)).status === 404, "an unknown download: 404");
  const addrs = listenAddresses(port);
  check(addrs.length === 1 && addrs[0] === "0100007F", "listens on 127.0.0.1 only (/proc/net/tcp)", addrs.join(","));
  check(!(await connects("127.0.0.2", port)), "127.0.0.2 is not served");
}

// Counts distinct colours (up to 1000) of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium
// writes): IDAT inflated with node's zlib, each row unfiltered (PNG's five filters).
function colours(file) {
  const buf = fs.readFileSync(file);
  const w = buf.readUInt32BE(16), h = buf.readUInt32BE(20), depth = buf[24], type = buf[25], interlace = buf[28];
  if (depth !== 8 || (type !== 2 && type !== 6) || interlace !== 0) return 0;
  const bpp = type === 6 ? 4 : 3, stride = w * bpp, idat = [];
  for (let at = 8; at + 8 <= buf.length;) {
    const len = buf.readUInt32BE(at), kind = buf.toString("latin1", at + 4, at + 8);
    if (kind === "IDAT") idat.push(buf.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  const raw = require("zlib").inflateSync(Buffer.concat(idat));
  let prev = Buffer.alloc(stride);
  const seen = new Set();
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], row = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? row[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const pred = f === 1 ? a : f === 2 ? b : f === 3 ? (a + b) >> 1 : f === 4 ? (pa <= pb && pa <= pc ? a : pb <= pc ? b : c) : 0;
      row[i] = (row[i] + pred) & 0xff;
    }
    for (let x = 0; x < w && seen.size < 1000; x += 3) seen.add((row[x * bpp] << 16) | (row[x * bpp + 1] << 8) | row[x * bpp + 2]);
    prev = row;
  }
  return seen.size;
}

// A click on a download link, the file the browser got (saved in --out).
async function download(page, sel) {
  const [d] = await Promise.all([page.waitForEvent("download", { timeout: 60000 }), page.click(sel)]);
  const f = path.join(args.out, d.suggestedFilename());
  await d.saveAs(f);
  return f;
}

// tests/exports/check_exports.mjs: the consumer's verdict on a file (null, and a failure, if it refuses).
function consumer(what, file, extra) {
  const script = path.join(__dirname, "..", "exports", "check_exports.mjs");
  try {
    return JSON.parse(execFileSync(process.execPath, [script, what, file, ...(extra ? [extra] : [])],
      { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 }).toString());
  } catch (e) {
    check(false, `${what} consumer reads ${path.basename(file)}`, String(e.stderr || e).slice(-1000));
    return null;
  }
}

async function shot(page, name, shots) {
  const f = path.join(args.out, `ui-${name}.png`);
  await page.screenshot({ path: f, fullPage: true });
  shots.push(f);
}

async function tab(page, name) {
  await page.click(`#tabs button[data-page="${name}"]`);
  await sleep(300);
}

async function threadsPage(page, shots) {
  await tab(page, "threads");
  const seen = [];
  const t0 = Date.now();
  // A thread started: a row no earlier snapshot had. A thread ended: a row a later snapshot lacks.
  // The first snapshot may fall between two Workers, so both are asked of every pair, not of the
  // first and the last only.
  const comes = () => {
    const sets = seen.map((x) => new Set(x.split(",")));
    return {
      started: sets.some((st, i) => i > 0 && [...st].some((x) => !sets.slice(0, i).some((a) => a.has(x)))),
      ended: sets.some((st, i) => [...st].some((x) => sets.slice(i + 1).some((later) => !later.has(x)))),
    };
  };
  /* A loaded machine runs minivm's Worker for many seconds (25 s once in CI, beside the
   * conformance run); the loop ends as soon as a thread has come and one has gone. */
  while (Date.now() - t0 < 60000) {
    seen.push(await page.$$eval("#thread-table tbody tr", (rs) => rs.map((r) => r.dataset.id).join(",")));
    const c = comes();
    if (c.started && c.ended) break;
    await sleep(500);
  }
  const { started, ended } = comes();
  check(started, "the thread table shows a thread that started", seen.join(" | "));
  check(ended, "the thread table drops a thread that ended", seen.join(" | "));
  // The rows are redrawn at every snapshot: the click happens inside the page, in one go.
  await page.evaluate(() => document.querySelector("#thread-table tbody tr").click());
  await page.waitForFunction(() => /frames/.test(document.querySelector("#stack").textContent), null, { timeout: 15000 })
    .catch(() => {});
  const stack = await page.$eval("#stack", (e) => e.textContent);
  check(/thread \d+: \d+ frames/.test(stack), "a click on a thread shows its stack", stack.slice(0, 200));
  const rows = await page.evaluate(() => window.ddmcUi.state.timeline.rows.length);
  check(rows >= 3, "the timeline has a row per thread", rows);
  const pf = await download(page, "#dl-perfetto");
  check(path.basename(pf) === "ddmc-threads.perfetto.json", "the Perfetto download's name", pf);
  const tr = consumer("chrome", pf);
  if (tr) {
    const pid = await page.evaluate(() => window.ddmcUi.state.vm.pid);
    const procs = tr.processes.filter((x) => x.pid === pid);
    const threads = procs.length ? procs[0].threads : [];
    const states = new Set(threads.flatMap((t) => Object.keys(t.slices)));
    check(tr.processes.length === 1 && threads.length >= 3, "Perfetto JSON: the VM as one process with its threads",
      JSON.stringify(tr).slice(0, 300));
    check(states.has("sleeping") || states.has("running"), "Perfetto JSON: thread state slices", [...states].join(","));
  }
  await shot(page, "threads", shots);
}

async function heapPage(page, vm, shots) {
  await tab(page, "heap");
  await page.waitForFunction(() => window.ddmcUi.heapPoints >= 3, null, { timeout: 20000 }).catch(() => {});
  const pts = await page.evaluate(() => window.ddmcUi.heapPoints);
  check(pts >= 3, "the heap chart has points", pts);
  check(await page.evaluate(() => !!window.ddmcUi.chart && window.ddmcUi.chart.data[0].length >= 3), "uPlot drew them");
  await page.click("#map-btn");
  await page.waitForFunction(() => !/collecting/.test(document.querySelector("#map-note").textContent), null,
    { timeout: 60000 }).catch(() => {});
  const note = await page.$eval("#map-note", (e) => e.textContent);
  if (vm.heapMap) {
    await page.waitForFunction(() => window.ddmcUi.heapMapWidth > 0, null, { timeout: 10000 }).catch(() => {});
    check(await page.evaluate(() => window.ddmcUi.heapMapWidth > 0), "the heap map is drawn", note);
  } else {
    check(/502|refused|FAIL|HPSG/.test(note), "a VM without heap segments: the page says the map was refused", note);
  }
  check(await page.$$eval("#map-legend span", (s) => s.length) >= 8, "the heap map has its legend");
  await page.click("#hprof-btn");
  await page.waitForFunction(() => window.ddmcUi.histogram !== undefined || /:/.test(document.querySelector("#hprof-note").textContent),
    null, { timeout: 90000 }).catch(() => {});
  const hist = await page.evaluate(() => window.ddmcUi.histogram || []);
  const ints = hist.find((r) => r.class === "int[]");
  check(ints && ints.count > 0 && ints.bytes >= ints.count * 4, "the class histogram of a heap dump lists int[]",
    JSON.stringify(hist.slice(0, 3)) + " " + (await page.$eval("#hprof-note", (e) => e.textContent)));
  check(await page.$$eval("#class-table tbody tr", (r) => r.length) === Math.min(hist.length, 500), "the histogram table shows it");
  await shot(page, "heap", shots);
}

async function allocPage(page, shots) {
  await tab(page, "allocs");
  await page.click("#alloc-start");
  await page.waitForFunction(() => document.querySelector("#alloc-note").textContent === "ok", null, { timeout: 15000 }).catch(() => {});
  await sleep(2500);
  await page.click("#alloc-get");
  await page.waitForFunction(() => window.ddmcUi.allocRecords !== undefined, null, { timeout: 15000 }).catch(() => {});
  const sites = await page.$$eval("#site-table tbody tr", (rs) => rs.map((r) => r.textContent));
  check(sites.some((s) => s.includes("int[]")), "the allocation sites list the Worker's int[]", sites.slice(0, 3).join(" | "));
  const types = await page.$$eval("#type-table tbody tr", (rs) => rs.length);
  check(types >= 1, "the types table has rows", types);
  await page.click("#site-table th[data-k=count]");
  const counts = await page.$$eval("#site-table tbody tr td:nth-child(3)", (ts) => ts.map((t) => Number(t.textContent)));
  check(counts.every((c, i) => i === 0 || counts[i - 1] >= c), "sorted by count on a click", counts.slice(0, 5).join(","));
  await page.click("#alloc-stop");
  const pb = await download(page, "#dl-alloc-pprof");
  const p = consumer("pprof", pb, args.proto);
  const records = await page.evaluate(() => window.ddmcUi.allocRecords);
  check(p && p.samples === records && JSON.stringify(p.sampleTypes) === '[["alloc_objects","count"],["alloc_space","bytes"]]',
    "the allocations' pprof download: a sample per record the page lists", p && `${p.samples} vs ${records}`);
  check(p && p.labels.class && p.labels.class["int[]"] > 0, "the pprof download names the Worker's int[]",
    p && JSON.stringify(p.labels.class));
  await shot(page, "allocations", shots);
}

async function tracePage(page, vm, shots) {
  await tab(page, "trace");
  await page.selectOption("#trace-mode", vm.traceMode);
  await page.click("#trace-start");
  await page.waitForFunction(() => document.querySelector("#trace-note").textContent === "ok", null, { timeout: 15000 }).catch(() => {});
  await sleep(4000);
  await page.selectOption("#trace-clock", vm.traceClock);
  await page.click("#trace-stop");
  await page.waitForFunction(() => window.ddmcUi.flame !== null, null, { timeout: 60000 }).catch(() => {});
  // The hot path of the threads that run the program's hot method (the VM samples every thread,
  // most of them asleep): from their merged root, on to the widest child while it has at least
  // half its parent's time. The hot method must be where it ends.
  const hotPath = await page.evaluate((hot) => {
    const root = window.ddmcUi.flame;
    if (!root) return [];
    const has = (nd) => nd.name === hot || [...nd.kids.values()].some(has);
    const merged = { total: 0, kids: new Map(), name: "all" };
    const merge = (into, nd) => {
      for (const k of nd.kids.values()) {
        let m = into.kids.get(k.name);
        if (!m) { m = { name: k.name, total: 0, kids: new Map() }; into.kids.set(k.name, m); }
        m.total += k.total;
        merge(m, k);
      }
    };
    for (const t of root.kids.values()) if (has(t)) { merged.total += t.total; merge(merged, t); }
    const p = [];
    let at = merged;
    for (;;) {
      const kids = [...at.kids.values()].sort((a, b) => b.total - a.total);
      if (!kids.length || kids[0].total * 2 < at.total) break;
      at = kids[0];
      p.push(at.name);
    }
    return p;
  }, vm.hot);
  check(hotPath[hotPath.length - 1] === vm.hot, `the flame graph's hot path ends in ${vm.hot}`, hotPath.join(" > "));
  const drawn = await page.$$eval(".flame .fr", (fs) => fs.map((f) => f.dataset.name));
  check(drawn.includes(vm.hot), "the flame graph draws the hot method", drawn.length);
  // Searching for the program's class keeps its methods (the JDK's sleep and wait go). A thread
  // asleep in one method the whole trace (main, joining its Workers) has the trace's wall time
  // there too, so the hot method tops the exclusive times of the threads that run it.
  await page.fill("#trace-search", vm.hot.split(".")[0] + ".");
  await sleep(300);
  const listed = await page.$$eval("#method-table tbody tr td:first-child", (ts) => ts.map((t) => t.textContent));
  check(listed.includes(vm.hot) && listed.every((n) => n.startsWith(vm.hot.split(".")[0] + ".")),
    "searching the program's class lists its methods, the hot one among them", listed.join(","));
  const top = await page.evaluate((hot) => {
    const root = window.ddmcUi.flame;
    const has = (nd) => nd.name === hot || [...nd.kids.values()].some(has);
    const kids = new Map([...root.kids].filter(([, t]) => has(t)));
    const ms = DdmcFlame.methods({ kids }).sort((a, b) => b.excl - a.excl);
    return ms.length ? ms[0].name : "";
  }, vm.hot);
  check(top === vm.hot, "the hot method tops the exclusive times of the threads that run it", top);
  const hits = await page.$$eval(".flame .fr.hit", (fs) => fs.length);
  check(hits >= 1, "searching highlights it in the flame graph", hits);
  check(await page.$$eval("#calltree summary", (s) => s.length) >= 2, "the call tree has nodes");
  const co = await download(page, "#dl-collapsed");
  check(fs.readFileSync(co, "utf8") === await page.evaluate(() => window.ddmcUi.traceText),
    "the collapsed-stacks download is what the flame graph was drawn from");
  const ss = consumer("speedscope", await download(page, "#dl-speedscope"));
  check(ss && ss.profiles.some((pr) => pr.opens[vm.hot] > 0), `the speedscope download opens ${vm.hot}`,
    ss && JSON.stringify(ss.profiles.map((pr) => pr.name)));
  const pp = consumer("pprof", await download(page, "#dl-trace-pprof"), args.proto);
  check(pp && pp.incl[vm.hot] && pp.incl[vm.hot][0] > 0, `the trace's pprof download has time in ${vm.hot}`,
    pp && Object.keys(pp.incl).slice(0, 10).join(","));
  check(pp && pp.defaultSampleType === vm.traceClock, `the trace's pprof download counts the page's clock (${vm.traceClock})`,
    pp && pp.defaultSampleType);
  await shot(page, "trace", shots);
}

// minivm: the VM goes (the VMs page says so), a new one on the same port comes (connected again).
async function vmLeavesAndComesBack(page, vm, shots) {
  await tab(page, "vms");
  const pid = String(vm.proc.pid);
  process.kill(vm.proc.pid, "SIGKILL");
  // Gone: the row no longer says connected nor shows the VM's pid. What it says instead depends on
  // who has the port meanwhile: nobody (unreachable, lost), or, in a parallel test run, another
  // process that took the freed port and closes our handshake (shown as held by another peer).
  const goneNow = (pidText) => {
    const cells = [...document.querySelectorAll("#vm-table tbody td")].map((td) => td.textContent.trim());
    return cells.length > 0 && !cells.includes("connected") && !cells.includes(pidText);
  };
  await page.waitForFunction(goneNow, pid, { timeout: 15000 }).catch(() => {});
  const gone = await page.$eval("#vm-table tbody", (e) => e.textContent);
  check(await page.evaluate(goneNow, pid), "the VMs page shows the VM gone", gone);
  await startAndWait(args.minivm, [`-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:${vm.port},server=y,suspend=n`,
    args.program], /JDWP listening/, 20000, path.join(args.out, "vm2.out"));
  await page.waitForFunction(() => /connected/.test(document.querySelector("#vm-table tbody").textContent), null,
    { timeout: 20000 }).catch(() => {});
  const back = await page.$eval("#vm-table tbody", (e) => e.textContent);
  check(/connected/.test(back), "a VM on the same port again: connected", back);
}

async function main() {
  fs.mkdirSync(args.out, { recursive: true });
  const vm = await startVm();
  log(`VM on port ${vm.port}`);
  const ui = await startAndWait(args.ddmc, ["-c", `127.0.0.1:${vm.port}`, "ui"], /(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+))/,
    15000, path.join(args.out, "ddmc-ui.out"));
  const [, url, port, token] = ui.m;
  log(`ddmc ui at ${url}`);
  await securityChecks(url, port, token);
  const { chromium } = require("playwright-core");
  const browser = await chromium.launch({ executablePath: args.chromium || "/usr/bin/chromium", args: ["--no-sandbox",
    "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
    "--disable-sync"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    /* A failed request's console line does not name it: the URL and the server's reason do. */
    page.on("response", async (r) => {
      if (r.status() >= 500) errors.push(`${r.status()} ${new URL(r.url()).pathname}: ${(await r.text().catch(() => "")).slice(0, 200)}`);
    });
    const shots = [];
    await page.goto(url);
    await page.waitForFunction(() => window.ddmcUi && window.ddmcUi.state && window.ddmcUi.state.vm.state === "connected",
      null, { timeout: 20000 }).catch(() => {});
    const vmRow = await page.$eval("#vm-table tbody", (e) => e.textContent).catch(() => "");
    check(/connected/.test(vmRow) && /none|waiting/.test(vmRow), "the VMs page shows the VM connected", vmRow);
    await shot(page, "vms", shots);
    await threadsPage(page, shots);
    await heapPage(page, vm, shots);
    await allocPage(page, shots);
    await tracePage(page, vm, shots);
    check(errors.length === 0, "no console error on any page", errors.join(" | "));
    if (vm.proc) await vmLeavesAndComesBack(page, vm, shots);
    for (const f of shots) {
      const n = colours(f);
      check(n >= 8, `${path.basename(f)} is not blank (${n} colours)`);
    }
  } finally {
    await browser.close();
  }
  process.kill(ui.proc.pid, "SIGTERM");
  const code = await new Promise((r) => { const t = setTimeout(() => r(null), 10000); ui.proc.on("exit", (c) => { clearTimeout(t); r(c); }); });
  check(code === 0, "ddmc ui ends cleanly on SIGTERM", code);
}

// ---- ddmc ui --all through adb ----------------------------------------------------------------
const listedRow = (pid) => {
  const tr = document.querySelector(`#vm-table tbody tr[data-pid="${pid}"]`);
  return tr ? [...tr.children].map((td) => td.textContent) : null;
};

async function shownVm(page, pid, what) {
  await page.waitForFunction((p) => { const v = window.ddmcUi.state && window.ddmcUi.state.vm;
    return v && v.pid === p && v.state === "connected"; }, pid, { timeout: 15000 }).catch(() => {});
  const vm = await page.evaluate(() => window.ddmcUi.state.vm);
  check(vm.pid === pid && vm.state === "connected", what, JSON.stringify(vm));
}

async function mainAdb() {
  fs.mkdirSync(args.out, { recursive: true });
  const [a, z, held] = args.pids.split(",").map(Number);
  const ui = await startAndWait(args.ddmc, ["-P", args["adb-port"], "-s", args.serial, "-p", String(a), "ui", "--all"],
    /(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+))/, 15000, path.join(args.out, "ddmc-ui.out"));
  const { chromium } = require("playwright-core");
  const browser = await chromium.launch({ executablePath: args.chromium || "/usr/bin/chromium", args: ["--no-sandbox",
    "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(ui.m[1]);
    await shownVm(page, a, "-p PID: ui shows that VM first, connected through adb");
    await page.waitForFunction((ps) => ps.every((p) => document.querySelector(`#vm-table tbody tr[data-pid="${p}"]`)),
      [a, z], { timeout: 15000 }).catch(() => {});
    const rowA = await page.evaluate(listedRow, a), rowZ = await page.evaluate(listedRow, z);
    check(rowA && rowZ, "the VMs page lists both VMs adb knows", JSON.stringify([rowA, rowZ]));
    await page.waitForFunction((p) => { const tr = document.querySelector(`#vm-table tbody tr[data-pid="${p}"]`);
      return tr && tr.children[6].textContent === "waiting"; }, z, { timeout: 15000 }).catch(() => {});
    const zNow = await page.evaluate(listedRow, z);
    check(zNow && zNow[6] === "waiting" && zNow[2] === "com.example.zygote", "the zygote: renamed, waiting for a debugger",
      JSON.stringify(zNow));
    const heldRow = await page.evaluate(listedRow, held);
    check(heldRow && heldRow[6] === "attached", "a VM held by a debugger: attached", JSON.stringify(heldRow));
    // A VM that starts appears; a click shows it on the other pages.
    const c = spawn(args.minivm, ["-agentlib:jdwp=transport=dt_android_adb,server=y,suspend=n",
      path.join(args.programs, "threads.mvm")], { stdio: "ignore", env: { ...process.env, DDMC_ADB_CONTROL: args.control } });
    children.push(c);
    await page.waitForFunction((p) => document.querySelector(`#vm-table tbody tr[data-pid="${p}"]`), c.pid,
      { timeout: 15000 }).catch(() => {});
    check(await page.evaluate(listedRow, c.pid), "a VM that starts appears on the VMs page", c.pid);
    await shot(page, "vms-all", []);
    await page.click(`#vm-table tbody tr[data-pid="${c.pid}"]`).catch((e) => check(false, "click the new VM", String(e)));
    await shownVm(page, c.pid, "a click on it: the pages show that VM");
    await tab(page, "threads");
    await page.waitForFunction(() => [...document.querySelectorAll("#thread-table tbody tr")].some((r) => /Sleeper/.test(r.textContent)),
      null, { timeout: 20000 }).catch(() => {});
    const names = await page.$$eval("#thread-table tbody tr", (rs) => rs.map((r) => r.children[1].textContent));
    check(names.includes("Sleeper") && names.includes("Busy"), "the Threads page lists the picked VM's threads", names.join(","));
    await tab(page, "vms");
    process.kill(c.pid, "SIGKILL");
    await page.waitForFunction((p) => !document.querySelector(`#vm-table tbody tr[data-pid="${p}"]`), c.pid,
      { timeout: 15000 }).catch(() => {});
    check(!(await page.evaluate(listedRow, c.pid)), "a VM that ends leaves the VMs page", c.pid);
    await page.click(`#vm-table tbody tr[data-pid="${a}"]`).catch((e) => check(false, "click the first VM", String(e)));
    await shownVm(page, a, "a click on the first VM shows it again");
    check(errors.length === 0, "no console error", errors.join(" | "));
  } finally {
    await browser.close();
  }
  process.kill(ui.proc.pid, "SIGTERM");
  const code = await new Promise((r) => { const t = setTimeout(() => r(null), 15000); ui.proc.on("exit", (x) => { clearTimeout(t); r(x); }); });
  check(code === 0, "ddmc ui --all ends cleanly on SIGTERM", code);
  // -p alone (no --all): that VM through adb, no list.
  const one = await startAndWait(args.ddmc, ["-P", args["adb-port"], "-s", args.serial, "-p", String(z), "ui"],
    /http:\/\/127\.0\.0\.1:(\d+)\/\?token=([0-9a-f]+)/, 15000, path.join(args.out, "ddmc-ui-p.out"));
  let st = null;
  for (const t0 = Date.now(); Date.now() - t0 < 20000; await sleep(300)) {
    st = await new Promise((resolve) => {
      http.get({ host: "127.0.0.1", port: one.m[1], path: `/api/state?token=${one.m[2]}` }, (res) => {
        let body = "";
        res.on("data", (d) => { body += d; });
        res.on("end", () => { try { resolve(JSON.parse(body)); } catch (e) { resolve(null); } });
      }).on("error", () => resolve(null));
    });
    if (st && st.vm.state === "connected" && st.vm.pid === z) break;
  }
  check(st && st.vm.state === "connected" && st.vm.pid === z && st.vm.app === "com.example.zygote" && !st.list,
    "ddmc -p PID ui (no --all): that VM, no list", st && JSON.stringify(st.vm));
  process.kill(one.proc.pid, "SIGTERM");
}

(args["adb-port"] ? mainAdb : main)().then(() => {
  console.log(`${passed} passed, ${failures.length} failed`);
  cleanup();
  process.exit(failures.length ? 1 : 0);
}, (e) => {
  console.log(`FAIL ${e.stack || e}`);
  console.log(`${passed} passed, ${failures.length + 1} failed`);
  cleanup();
  process.exit(1);
});
