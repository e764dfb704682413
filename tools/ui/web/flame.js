// SPDX-License-Identifier: Apache-2.0
// Collapsed stacks ("thread;Class.method;Class.method N", what ddmc's export_collapsed writes) made
// into a call tree, a per-method table and a flame graph (root on top, callees below, widths in
// proportion to inclusive time). No library: a few hundred divs.
"use strict";
const DdmcFlame = (() => {
  function node(name) { return { name, self: 0, total: 0, kids: new Map() }; }

  // The tree: the root's children are the threads.
  function parse(text) {
    const root = node("all");
    for (const line of text.split("\n")) {
      const sp = line.lastIndexOf(" ");
      if (sp <= 0) continue;
      const n = Number(line.slice(sp + 1));
      if (!Number.isFinite(n) || n <= 0) continue;
      let at = root;
      at.total += n;
      for (const f of line.slice(0, sp).split(";")) {
        let k = at.kids.get(f);
        if (!k) { k = node(f); at.kids.set(f, k); }
        k.total += n;
        at = k;
      }
      at.self += n;
    }
    return root;
  }

  // Per method: inclusive time counted once per stack it is on (recursion not twice), exclusive
  // time where it is the leaf. Thread roots are left out.
  function methods(root) {
    const m = new Map();
    const stack = [];
    const rec = (nd) => {
      for (const k of nd.kids.values()) {
        let e = m.get(k.name);
        if (!e) { e = { name: k.name, incl: 0, excl: 0 }; m.set(k.name, e); }
        if (!stack.includes(k.name)) e.incl += k.total;
        e.excl += k.self;
        stack.push(k.name);
        rec(k);
        stack.pop();
      }
    };
    for (const t of root.kids.values()) rec(t);
    return [...m.values()];
  }

  const colors = ["#e57373", "#ffb74d", "#fff176", "#aed581", "#4fc3f7", "#ba68c8", "#f06292", "#90a4ae"];
  function colorOf(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
    return colors[Math.abs(h) % colors.length];
  }

  // Draws into el; frames narrower than 0.2 % are left out, at most 4000 of them.
  function render(el, root, onClick) {
    el.textContent = "";
    const total = root.total || 1, rowH = 18;
    let count = 0, depthMax = 0;
    const place = (nd, x, depth) => {
      if (count >= 4000) return;
      const w = nd.total / total;
      if (w < 0.002) return;
      const d = document.createElement("div");
      d.className = "fr";
      d.style.left = (x * 100) + "%";
      d.style.width = (w * 100) + "%";
      d.style.top = (depth * rowH) + "px";
      d.style.background = depth === 0 ? "#b0bec5" : colorOf(nd.name);
      d.textContent = nd.name;
      d.title = `${nd.name}\ninclusive ${nd.total} µs (${(w * 100).toFixed(1)} %), self ${nd.self} µs`;
      d.dataset.name = nd.name;
      d.dataset.width = String(w);
      d.dataset.depth = String(depth);
      if (onClick) d.addEventListener("click", () => onClick(nd));
      el.appendChild(d);
      count++;
      depthMax = Math.max(depthMax, depth);
      let cx = x;
      for (const k of [...nd.kids.values()].sort((a, b) => a.name < b.name ? -1 : 1)) {
        place(k, cx, depth + 1);
        cx += k.total / total;
      }
    };
    place(root, 0, 0);
    el.style.height = ((depthMax + 1) * rowH + 2) + "px";
  }

  function highlight(el, text) {
    const q = text.trim().toLowerCase();
    for (const d of el.querySelectorAll(".fr")) {
      const hit = q !== "" && d.dataset.name.toLowerCase().includes(q);
      d.classList.toggle("hit", hit);
      d.classList.toggle("dim", q !== "" && !hit);
    }
  }

  // A folding call tree: <details> per node, children by inclusive time, at most 50 per level.
  function tree(el, root, filter) {
    el.textContent = "";
    const q = (filter || "").trim().toLowerCase();
    const matches = (nd) => q === "" || nd.name.toLowerCase().includes(q) || [...nd.kids.values()].some(matches);
    const add = (parent, nd, depth) => {
      const kids = [...nd.kids.values()].filter(matches).sort((a, b) => b.total - a.total).slice(0, 50);
      const det = document.createElement("details");
      if (depth < 3 || q !== "") det.open = true;
      const sum = document.createElement("summary");
      sum.textContent = `${nd.name}  incl ${nd.total} µs  excl ${nd.self} µs`;
      det.appendChild(sum);
      parent.appendChild(det);
      if (depth < 64) for (const k of kids) add(det, k, depth + 1);
    };
    for (const t of [...root.kids.values()].filter(matches)) add(el, t, 0);
  }

  return { parse, methods, render, highlight, tree };
})();
