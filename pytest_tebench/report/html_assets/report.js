/* pytest-tebench HTML report: sortable tables, item filters and the per-item drill-down.
   Plain ES2020, no library: the page must open offline. The item data is gzip+base64 JSON in
   #tebench-data, unpacked with the browser's DecompressionStream. */
"use strict";

const PAGE = 300; // rows drawn at once; "show more" draws the next page
const state = { items: [], patches: {}, shown: PAGE, selected: -1, columns: [], sort: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "html") node.innerHTML = value; // only for pygments output made by the harness
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const pct = (v) => (typeof v === "number" ? (Math.round(v * 1e6) / 1e4).toFixed(1) : "-");
const status = (s) => el("span", { class: `status ${s}` }, String(s).replace(/_/g, " "));

/* -- sortable tables ----------------------------------------------------------------------- */
function sortTable(table, th) {
  const headRow = th.parentElement;
  const index = Array.from(headRow.children).indexOf(th);
  const asc = !th.classList.contains("asc");
  headRow.querySelectorAll("th").forEach((h) => h.classList.remove("asc", "desc"));
  th.classList.add(asc ? "asc" : "desc");
  const numeric = th.dataset.sort === "num";
  const body = table.tBodies[0];
  const key = (row) => {
    const cell = row.children[index];
    const raw = cell ? (cell.dataset.v ?? cell.textContent) : "";
    if (!numeric) return raw.toLowerCase();
    return raw === "" ? null : Number(raw);
  };
  const rows = Array.from(body.rows);
  rows.sort((a, b) => {
    const x = key(a), y = key(b);
    if (x === y) return 0;
    if (x === null) return 1; // missing values last, whatever the direction
    if (y === null) return -1;
    return (x < y ? -1 : 1) * (asc ? 1 : -1);
  });
  rows.forEach((row) => body.append(row));
}

function initSortable() {
  document.querySelectorAll("table.board").forEach((table) => {
    table.tHead.addEventListener("click", (event) => {
      const th = event.target.closest("th[data-sort]");
      if (th) sortTable(table, th);
    });
  });
}

/* -- item list ----------------------------------------------------------------------------- */
function uniq(values) {
  return Array.from(new Set(values)).sort((a, b) => String(a).localeCompare(String(b)));
}

function fillSelect(name, values) {
  const select = document.querySelector(`#filters [name=${name}]`);
  for (const value of values) select.append(el("option", { value }, value));
}

function filters() {
  const form = document.getElementById("filters");
  return {
    model: form.model.value, label: form.label.value, project: form.project.value,
    status: form.status.value, text: form.text.value.trim().toLowerCase(),
  };
}

function matches(item, f) {
  const r = item.record;
  if (f.model && item.model !== f.model) return false;
  if (f.label && !(r.labels || []).includes(f.label)) return false;
  if (f.project && r.project !== f.project) return false;
  if (f.status && r.status !== f.status) return false;
  if (f.text) {
    const hay = `${r.instance_id} ${r.error || ""} ${item.model}`.toLowerCase();
    if (!hay.includes(f.text)) return false;
  }
  return true;
}

function visibleItems() {
  const f = filters();
  const list = state.items.map((item, index) => [item, index]).filter(([item]) => matches(item, f));
  if (state.sort) {
    const { column, asc } = state.sort;
    const value = ([item]) => column.get(item);
    list.sort((a, b) => {
      const x = value(a), y = value(b);
      if (x === y) return 0;
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      return (x < y ? -1 : 1) * (asc ? 1 : -1);
    });
  }
  return list;
}

function buildColumns() {
  const paths = [];
  for (const item of state.items) for (const path of Object.keys(item.scores)) if (!paths.includes(path)) paths.push(path);
  // the headline scores (f1, s_update...) first; the table is for finding items, the detail has the rest
  const rank = (p) => { const i = ["f1", "oa", "s_update", "resolved", "score"].indexOf(p.split(".").pop()); return i < 0 ? 99 : i; };
  paths.sort((a, b) => rank(a) - rank(b));
  state.columns = [
    { name: "instance", get: (it) => it.record.instance_id, cell: (it) => it.record.instance_id },
    { name: "model", get: (it) => it.model, cell: (it) => it.model },
    { name: "status", get: (it) => it.record.status, cell: (it) => status(it.record.status) },
    ...paths.slice(0, 3).map((path) => ({
      name: path.split(".").pop(), title: path, numeric: true,
      get: (it) => (path in it.scores ? it.scores[path] : null),
      cell: (it) => pct(it.scores[path]),
    })),
  ];
  const head = document.getElementById("item-head");
  state.columns.forEach((column) => {
    const th = el("th", { "data-sort": column.numeric ? "num" : "text", title: column.title || null }, column.name);
    th.addEventListener("click", () => {
      const asc = !(state.sort && state.sort.column === column && state.sort.asc);
      state.sort = { column, asc };
      head.querySelectorAll("th").forEach((h) => h.classList.remove("asc", "desc"));
      th.classList.add(asc ? "asc" : "desc");
      renderList();
    });
    head.append(th);
  });
}

function renderList() {
  const list = visibleItems();
  const body = document.getElementById("item-body");
  body.replaceChildren(...list.slice(0, state.shown).map(([item, index]) => {
    const row = el("tr", { class: index === state.selected ? "selected" : null, "data-index": index },
      state.columns.map((c) => el("td", { class: c.numeric ? "score" : null,
        style: c.numeric && typeof c.get(item) === "number" ? `--v:${c.get(item)}` : null }, c.cell(item))));
    row.addEventListener("click", () => select(index));
    return row;
  }));
  document.getElementById("shown").textContent = `${Math.min(list.length, state.shown)} of ${list.length} shown (${state.items.length} items)`;
  document.getElementById("more").hidden = list.length <= state.shown;
}

/* -- one item -------------------------------------------------------------------------------- */
function kv(pairs) {
  return el("dl", { class: "kv" }, pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function listTable(rows) {
  // records are key-sorted; these read best first
  const keys = ["class", "method", "key", "path", "status"].filter((k) => rows.some((r) => k in r));
  rows.forEach((r) => Object.keys(r).forEach((k) => { if (!keys.includes(k)) keys.push(k); }));
  return el("div", { class: "scroll" }, el("table", {},
    el("thead", {}, el("tr", {}, keys.map((k) => el("th", {}, k)))),
    el("tbody", {}, rows.map((r) => el("tr", {}, keys.map((k) => {
      const v = r[k];
      if (k === "status") return el("td", {}, status(v));
      return el("td", {}, v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
    }))))));
}

function patchPanel(title, id) {
  const html = id ? state.patches[id] : null;
  return el("div", {}, el("h5", {}, title),
    html ? el("div", { class: "hl", html }) : el("p", { class: "note" }, "no patch in the record"));
}

function setsPanel(sets) {
  const box = (kind, title) => el("div", { class: kind }, el("h5", {}, `${title} (${sets[kind].length})`),
    el("ul", {}, sets[kind].map((i) => el("li", {}, i))));
  return el("div", { class: "sets" }, box("tp", "TP: found"), box("fp", "FP: not in gold"), box("fn", "FN: missed"));
}

function coveragePanel(coverage) {
  const parts = [];
  const ratio = (hit, all, what) => {
    if (typeof all !== "number") return null;
    return el("p", { class: "lines" }, el("span", { class: "hit" }, `${hit} covered`), " ",
      el("span", { class: "miss" }, `${all - hit} missed`), ` of ${all} gold-covered ${what}`);
  };
  parts.push(ratio(coverage.pred_lines_in_gold, coverage.gold_lines, "lines of the changed methods"));
  parts.push(ratio(coverage.pred_branches_in_gold, coverage.gold_branches, "branches"));
  if (Array.isArray(coverage.changed_methods) && coverage.changed_methods.length) {
    parts.push(el("h5", {}, "production methods the commit changed"), listTable(coverage.changed_methods));
  }
  return parts;
}

function select(index) {
  state.selected = index;
  document.querySelectorAll("#item-body tr").forEach((row) =>
    row.classList.toggle("selected", Number(row.dataset.index) === index));
  const item = state.items[index];
  const r = item.record;
  const update = r.update && typeof r.update === "object" ? r.update : null;
  const parts = [
    el("h3", {}, r.instance_id, " ", status(r.status)),
    kv([
      ["model", item.model], ["project", r.project], ["labels", (r.labels || []).join(", ")],
      ["apply method", r.apply_method], ["build status", update ? update.status : null],
      ["executor", update ? [update.executor, update.java_version && `JDK ${update.java_version}`].filter(Boolean).join(", ") : null],
      ["files outside the test tree", (r.touched_non_test_files || []).join(", ")],
      ["runner files refused", (r.refused_files || []).filter((f) => f.kind === "runner").map((f) => `${f.path} (${f.rule})`).join(", ")],
      ["test content set aside", (r.set_aside_files || []).join(", ")],
      ["workspace", r.workspace],
    ]),
  ];
  const errors = [r.error, update && update.error].filter(Boolean);
  if (errors.length) parts.push(el("h4", {}, "error"), ...errors.map((e) => el("pre", { class: "error" }, e)));
  const tamper = r.guard && Array.isArray(r.guard.findings) ? r.guard.findings : [];
  if (tamper.length) parts.push(el("h4", {}, "tampering evidence"), el("ul", {}, tamper.map((f) => el("li", {}, `${f.rule}: ${f.detail}`))));
  if (r.warnings && r.warnings.length) parts.push(el("h4", {}, "warnings"), el("ul", {}, r.warnings.map((w) => el("li", {}, w))));
  const scores = Object.entries(item.scores);
  if (scores.length) parts.push(el("h4", {}, "scores"), kv(scores.map(([k, v]) => [k, pct(v)])));
  if (item.sets) parts.push(el("h4", {}, "identified items"), setsPanel(item.sets));
  parts.push(el("h4", {}, "patches"), el("div", { class: "patches" },
    patchPanel("prediction", item.patches.prediction_patch), patchPanel("gold", item.patches.gold_patch)));
  if (update && Array.isArray(update.tests) && update.tests.length) {
    parts.push(el("h4", {}, `tests of the prediction (${update.tests.length})`), listTable(update.tests));
  }
  if (update && update.coverage) parts.push(el("h4", {}, "coverage of gold's lines"), ...coveragePanel(update.coverage));
  const timings = Object.entries(item.timings);
  if (timings.length) parts.push(el("h4", {}, "timings (seconds)"), kv(timings.map(([k, v]) => [k, v.toFixed(2)])));
  parts.push(el("details", {}, el("summary", {}, "all fields of the record"), el("pre", {}, JSON.stringify(r, null, 2))));
  document.getElementById("detail").replaceChildren(...parts);
}

/* -- start ------------------------------------------------------------------------------------ */
async function unpack() {
  const text = document.getElementById("tebench-data").textContent.trim();
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

async function start() {
  initSortable();
  let data;
  try {
    data = await unpack();
  } catch (error) {
    document.getElementById("item-body").replaceChildren(el("tr", {}, el("td", {},
      `cannot unpack the item data in this browser (${error}); the leaderboard and plots above are complete`)));
    throw error;
  }
  state.items = data.items;
  state.patches = data.patches;
  fillSelect("model", uniq(state.items.map((i) => i.model)));
  fillSelect("label", uniq(state.items.flatMap((i) => i.record.labels || [])));
  fillSelect("project", uniq(state.items.map((i) => i.record.project)));
  fillSelect("status", uniq(state.items.map((i) => i.record.status)));
  buildColumns();
  const form = document.getElementById("filters");
  form.addEventListener("input", () => { state.shown = PAGE; renderList(); });
  document.getElementById("more").addEventListener("click", () => { state.shown += PAGE; renderList(); });
  // leaderboard links filter the item list
  document.querySelectorAll("a[data-model], a[data-project]").forEach((a) => a.addEventListener("click", () => {
    form.model.value = a.dataset.model || "";
    form.project.value = a.dataset.project || "";
    state.shown = PAGE;
    renderList();
  }));
  renderList();
  const first = visibleItems()[0];
  if (first) select(first[1]);
  document.body.dataset.ready = "true"; // for the browser test: everything has been drawn
}

start();
