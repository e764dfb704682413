// SPDX-License-Identifier: Apache-2.0
// The page of `ddmc ui`: one live stream of snapshots (/api/events, server-sent events) drives
// the VMs, Threads and Heap pages; buttons post operations (/api/op/NAME). Every URL carries the
// token ddmc wrote into <body data-token>. window.ddmcUi exposes what the tests look at.
"use strict";
const TOKEN = document.body.dataset.token;
const $ = (sel) => document.querySelector(sel);
const ui = (window.ddmcUi = { state: null, events: 0, heapPoints: 0, flame: null, errors: [] });

function url(path, params) {
  const q = new URLSearchParams(params || {});
  q.set("token", TOKEN);
  return `${path}?${q}`;
}

async function op(name, arg) {
  const r = await fetch(url(`api/op/${name}`, arg === undefined ? {} : { arg: String(arg) }), { method: "POST" });
  // The VM's refusals come as 200 with X-Ddmc-Error (ui_http.c): not a failed request.
  const vmError = r.headers.get("X-Ddmc-Error");
  if (!r.ok || vmError) throw new Error(`${name}: ${vmError || r.status} ${await r.text()}`);
  return r;
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text === undefined || text === null ? "-" : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function fmtBytes(b) {
  if (b >= 1 << 30) return (b / (1 << 30)).toFixed(1) + " GiB";
  if (b >= 1 << 20) return (b / (1 << 20)).toFixed(1) + " MiB";
  if (b >= 1 << 10) return (b / (1 << 10)).toFixed(1) + " KiB";
  return b + " B";
}

// ---- tabs --------------------------------------------------------------------------------------
let page = "vms";
for (const b of document.querySelectorAll("#tabs button")) {
  b.addEventListener("click", () => {
    page = b.dataset.page;
    for (const x of document.querySelectorAll("#tabs button")) x.classList.toggle("on", x === b);
    for (const s of document.querySelectorAll(".page")) s.classList.toggle("on", s.id === `page-${page}`);
    if (ui.state) render(ui.state);
  });
}

// ---- VMs ---------------------------------------------------------------------------------------
// ddmc ui --all: every VM `ddmc ps` lists (s.list.ps, its JSON document), the picked one first
// with what this page's own connection says; a click on another row picks it.
function listedVms(s) {
  if (!s.list) return null;
  let doc = null;
  try { doc = s.list.ps ? JSON.parse(s.list.ps) : null; } catch (e) { ui.errors.push(String(e)); }
  ui.listed = doc && doc.processes ? doc.processes : [];
  return ui.listed;
}

function renderVmList(s, procs) {
  const tb = $("#vm-table tbody"), v = s.vm;
  for (const p of procs) {
    const tr = document.createElement("tr"), picked = p.pid === s.list.picked;
    tr.dataset.pid = p.pid;
    tr.className = picked ? "picked" : "pickable";
    cell(tr, `pid ${p.pid}`); cell(tr, p.pid); cell(tr, p.app_name || "(no name)"); cell(tr, p.vm_ident); cell(tr, p.abi);
    cell(tr, picked ? `${v.state} (shown)` : p.state);
    cell(tr, picked ? v.debugger : p.debugger);
    cell(tr, picked ? v.error || "" : p.message || "");
    if (!picked) tr.addEventListener("click", () => pickVm(p.pid));
    tb.appendChild(tr);
  }
  $("#vm-note").textContent = `${procs.length} VMs on the device${s.list.error ? " — " + s.list.error : ""}; click one to show it`;
}

async function pickVm(pid) {
  try {
    await op("pick", pid);
    traceRoot = null;
    for (const id of ["#trace-dl", "#alloc-dl"]) $(id).hidden = true;
  } catch (e) {
    $("#vm-note").textContent = String(e.message);
  }
}

function renderVms(s) {
  const tb = $("#vm-table tbody");
  tb.textContent = "";
  const v = s.vm, procs = listedVms(s);
  if (procs) {
    renderVmList(s, procs);
  } else {
    const tr = document.createElement("tr");
    cell(tr, v.target); cell(tr, v.pid); cell(tr, v.app || "(no name)"); cell(tr, v.vm_ident); cell(tr, v.abi);
    cell(tr, v.state); cell(tr, v.debugger); cell(tr, v.error || "");
    tb.appendChild(tr);
  }
  const st = $("#status");
  st.textContent = `${v.target}: ${v.state}${v.app ? " — " + v.app : ""}`;
  st.className = "status " + (v.state === "connected" ? "ok" : "bad");
}

// ---- threads -----------------------------------------------------------------------------------
const STATE_COLORS = { 0: "#616161", 1: "#43a047", 2: "#1e88e5", 3: "#e53935", 4: "#fb8c00", 5: "#8e24aa",
  6: "#00acc1", 7: "#6d4c41", 8: "#546e7a", 9: "#fdd835" };
const STATE_NAMES = ["zombie", "running", "sleeping", "monitor", "wait", "initializing", "starting", "native",
  "vmwait", "suspended"];
let selected = null;

async function showStack(id) {
  selected = id;
  const box = $("#stack");
  box.textContent = `thread ${id}…`;
  try {
    const st = await (await op("stack", id)).json();
    box.textContent = "";
    const h = document.createElement("b");
    h.textContent = `thread ${st.thread}: ${st.frames.length} frames`;
    box.appendChild(h);
    for (const f of st.frames) {
      const d = document.createElement("div");
      d.textContent = `at ${f.class}.${f.method}(${f.file ? f.file + (f.line >= 0 ? ":" + f.line : "") : "Unknown Source"})`;
      box.appendChild(d);
    }
  } catch (e) {
    box.textContent = String(e.message);
  }
  if (ui.state) renderThreads(ui.state);
}

function renderThreads(s) {
  const tb = $("#thread-table tbody");
  tb.textContent = "";
  for (const t of s.threads) {
    const tr = document.createElement("tr");
    tr.dataset.id = t.id;
    if (t.id === selected) tr.className = "sel";
    cell(tr, t.id, "num"); cell(tr, t.name || "(unnamed)");
    const b = document.createElement("span");
    b.className = "badge";
    b.textContent = t.state;
    b.style.background = STATE_COLORS[t.status] || "#9e9e9e";
    cell(tr, "").appendChild(b);
    cell(tr, t.tid, "num"); cell(tr, t.utime, "num"); cell(tr, t.stime, "num");
    cell(tr, t.daemon === undefined || t.daemon < 0 ? "?" : t.daemon ? "yes" : "no");
    tr.addEventListener("click", () => showStack(t.id));
    tb.appendChild(tr);
  }
  $("#thread-count").textContent = `(${s.threads.length})`;
  drawTimeline(s.timeline);
}

function drawTimeline(tl) {
  const cv = $("#timeline"), labelW = 160, rowH = 14, n = Math.max(tl.samples, 1);
  cv.height = Math.max(tl.rows.length * rowH + 4, 20);
  const g = cv.getContext("2d"), colW = (cv.width - labelW) / 180;
  g.fillStyle = "#fff";
  g.fillRect(0, 0, cv.width, cv.height);
  g.font = "11px monospace";
  tl.rows.forEach((r, i) => {
    const y = i * rowH + 2;
    g.fillStyle = "#333";
    g.fillText(`${r.id} ${r.name}`.slice(0, 22), 2, y + 10);
    for (let k = 0; k < r.s.length; k++) {
      const c = r.s[k];
      if (c === ".") continue;
      g.fillStyle = STATE_COLORS[c] || "#9e9e9e";
      g.fillRect(labelW + (180 - n + k) * colW, y, Math.ceil(colW), rowH - 2);
    }
  });
}

function stateLegend() {
  const el = $("#legend-states");
  STATE_NAMES.forEach((n, i) => {
    const s = document.createElement("span"), sw = document.createElement("i");
    sw.style.background = STATE_COLORS[i];
    s.appendChild(sw);
    s.appendChild(document.createTextNode(n));
    el.appendChild(s);
  });
}

// ---- heap --------------------------------------------------------------------------------------
let chart = null;
function gcMarks(u) {
  const gc = (ui.state && ui.state.heap.gc) || [], g = u.ctx;
  g.save();
  g.strokeStyle = "#e53935";
  g.setLineDash([4, 3]);
  for (const t of gc) {
    const x = u.valToPos(t, "x", true);
    if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
    g.beginPath(); g.moveTo(x, u.bbox.top); g.lineTo(x, u.bbox.top + u.bbox.height); g.stroke();
  }
  g.restore();
}

function renderHeap(s) {
  const h = s.heap, n = h.t.length;
  ui.heapPoints = n;
  const last = n - 1;
  $("#heap-now").innerHTML = "";
  if (n > 0) {
    for (const [k, v] of [["allocated", fmtBytes(h.allocated[last])], ["footprint", fmtBytes(h.footprint[last])],
      ["max", fmtBytes(h.max[last])], ["objects", h.objects[last]], ["GCs seen", h.gc.length]]) {
      const sp = document.createElement("span");
      sp.textContent = `${k}: ${v}`;
      $("#heap-now").appendChild(sp);
    }
  }
  const data = [h.t, h.allocated, h.footprint, h.max];
  if (!chart) {
    chart = new uPlot({
      width: Math.min(window.innerWidth - 60, 1100), height: 280,
      series: [{}, { label: "allocated", stroke: "#1e88e5", width: 2 }, { label: "footprint", stroke: "#43a047" },
        { label: "max", stroke: "#9e9e9e", dash: [6, 4] }],
      axes: [{}, { values: (u, vals) => vals.map(fmtBytes), size: 80 }],
      hooks: { draw: [gcMarks] },
    }, data, $("#heap-chart"));
    ui.chart = chart;
  } else {
    chart.setData(data);
  }
}

let zoom = 1;
function applyZoom() {
  const img = $("#heap-map");
  if (img.naturalWidth) img.style.width = img.naturalWidth * zoom + "px";
}

async function heapMap() {
  $("#map-note").textContent = "collecting (a GC with a heap dump)…";
  try {
    const blob = await (await op("heapmap")).blob();
    const img = $("#heap-map");
    img.onload = () => { applyZoom(); ui.heapMapWidth = img.naturalWidth; };
    img.src = URL.createObjectURL(blob);
    $("#map-note").textContent = `heap map: ${blob.size} bytes of PNG, one pixel per 8-byte unit`;
  } catch (e) {
    $("#map-note").textContent = String(e.message);
  }
}

async function mapLegend() {
  const cols = await (await fetch(url("api/legend"))).json();
  for (const c of cols) {
    const s = document.createElement("span"), sw = document.createElement("i");
    sw.style.background = c.rgb;
    s.appendChild(sw);
    s.appendChild(document.createTextNode(c.label || c.name));
    $("#map-legend").appendChild(s);
  }
}

async function heapDump() {
  $("#hprof-note").textContent = "dumping the heap (the VM stops while it writes)…";
  try {
    const h = await (await op("hprof")).json();
    ui.histogram = h.rows;
    $("#hprof-note").textContent = `${h.classes} classes in a ${fmtBytes(h.bytes)} dump` +
      (h.rows.length < h.classes ? ` (the ${h.rows.length} largest)` : "");
    sortable("#class-table", h.rows, (tr, r) => { cell(tr, r.class); cell(tr, r.count, "num"); cell(tr, r.bytes, "num"); });
  } catch (e) {
    $("#hprof-note").textContent = String(e.message);
  }
}

// ---- allocations -------------------------------------------------------------------------------
const sorts = {};
function sortable(tableSel, rows, fill) {
  const table = $(tableSel), key = sorts[tableSel] || { k: "bytes", dir: -1 };
  const sorted = [...rows].sort((a, b) => (a[key.k] < b[key.k] ? -1 : a[key.k] > b[key.k] ? 1 : 0) * key.dir);
  const tb = table.querySelector("tbody");
  tb.textContent = "";
  for (const r of sorted.slice(0, 500)) {
    const tr = document.createElement("tr");
    fill(tr, r);
    tb.appendChild(tr);
  }
  for (const th of table.querySelectorAll("th[data-k]")) {
    th.onclick = () => {
      const cur = sorts[tableSel] || key;
      sorts[tableSel] = { k: th.dataset.k, dir: cur.k === th.dataset.k ? -cur.dir : -1 };
      sortable(tableSel, rows, fill);
    };
  }
}

function group(records, keyOf) {
  const m = new Map();
  for (const r of records) {
    const k = keyOf(r);
    let e = m.get(k);
    if (!e) { e = { class: r.class, site: r.site, count: 0, bytes: 0 }; m.set(k, e); }
    e.count++;
    e.bytes += r.size;
  }
  return [...m.values()];
}

async function getAllocs() {
  try {
    const rep = await (await op("alloc")).json();
    ui.allocRecords = rep.records.length;
    $("#alloc-dl").hidden = false;
    $("#alloc-note").textContent = `${rep.records.length} records; tracking ${rep.tracking ? "on" : "off"}`;
    sortable("#site-table", group(rep.records, (r) => r.class + "\u0000" + r.site), (tr, r) => {
      cell(tr, r.class); cell(tr, r.site); cell(tr, r.count, "num"); cell(tr, r.bytes, "num");
    });
    sortable("#type-table", group(rep.records, (r) => r.class), (tr, r) => {
      cell(tr, r.class); cell(tr, r.count, "num"); cell(tr, r.bytes, "num");
    });
  } catch (e) {
    $("#alloc-note").textContent = String(e.message);
  }
}

// ---- traces ------------------------------------------------------------------------------------
let traceRoot = null;
function renderTrace() {
  if (!traceRoot) return;
  const q = $("#trace-search").value;
  DdmcFlame.render($("#flame"), traceRoot, (nd) => { $("#trace-search").value = nd.name; renderTrace(); });
  DdmcFlame.highlight($("#flame"), q);
  const ms = DdmcFlame.methods(traceRoot).filter((m) => q === "" || m.name.toLowerCase().includes(q.toLowerCase()));
  if (!sorts["#method-table"]) sorts["#method-table"] = { k: "excl", dir: -1 };
  sortable("#method-table", ms, (tr, m) => { cell(tr, m.name); cell(tr, m.incl, "num"); cell(tr, m.excl, "num"); });
  DdmcFlame.tree($("#calltree"), traceRoot, q);
}

async function traceStop() {
  $("#trace-note").textContent = "stopping, fetching the trace…";
  try {
    const text = await (await op("trace-stop", $("#trace-clock").value)).text();
    traceRoot = DdmcFlame.parse(text);
    ui.traceText = text;
    ui.flame = traceRoot;
    $("#trace-dl").hidden = false;
    $("#trace-note").textContent = `${traceRoot.total} µs in ${text.split("\n").length - 1} stacks`;
    renderTrace();
  } catch (e) {
    $("#trace-note").textContent = String(e.message);
  }
}

// ---- wiring ------------------------------------------------------------------------------------
function render(s) {
  if (page === "vms") renderVms(s);
  else $("#status").textContent = `${s.vm.target}: ${s.vm.state}${s.vm.app ? " — " + s.vm.app : ""}`;
  if (page === "threads") renderThreads(s);
  if (page === "heap") renderHeap(s);
  $("#alloc-start").disabled = s.vm.tracking_allocs;
  $("#trace-start").disabled = s.vm.tracing;
}

const note = (sel, p) => p.then(() => { $(sel).textContent = "ok"; }, (e) => { $(sel).textContent = String(e.message); });
$("#gc-btn").addEventListener("click", () => note("#map-note", op("gc")));
$("#map-btn").addEventListener("click", heapMap);
$("#hprof-btn").addEventListener("click", heapDump);
$("#zoom-in").addEventListener("click", () => { zoom = Math.min(zoom * 2, 16); applyZoom(); });
$("#zoom-out").addEventListener("click", () => { zoom = Math.max(zoom / 2, 0.25); applyZoom(); });
$("#alloc-start").addEventListener("click", () => note("#alloc-note", op("alloc-start")));
$("#alloc-stop").addEventListener("click", () => note("#alloc-note", op("alloc-stop")));
$("#alloc-get").addEventListener("click", getAllocs);
$("#trace-start").addEventListener("click", () => note("#trace-note", op("trace-start", $("#trace-mode").value)));
$("#trace-stop").addEventListener("click", traceStop);
$("#trace-search").addEventListener("input", renderTrace);

// Downloads: what the page holds, written by ddmc's own exporters (GET /api/export/NAME).
for (const a of document.querySelectorAll("a[data-export]")) {
  a.href = url(`api/export/${a.dataset.export}`);
  a.download = `ddmc-${a.dataset.export}`;
}

stateLegend();
mapLegend().catch((e) => ui.errors.push(String(e)));
const es = new EventSource(url("api/events"));
es.addEventListener("state", (ev) => {
  ui.state = JSON.parse(ev.data);
  ui.events++;
  render(ui.state);
});
es.onerror = () => { $("#status").textContent = "ddmc is not answering"; $("#status").className = "status bad"; };
