// The web view of tiletuned: jobs, a job's items (trials, convergence,
// decision, compile reports), records and devices. Served by the daemon
// (reads /api/...), or inlined in the file `tiletune report JOB --html`
// writes (reads the JSON in #tiletune-data). Every text that comes from the
// daemon is put on the page as text (textContent, createTextNode), never
// as markup: job names, kernel names and errors are user input.
"use strict";
(function () {
  const dataElement = document.getElementById("tiletune-data");
  const standalone = dataElement ? JSON.parse(dataElement.textContent) : null;
  const main = document.getElementById("main");
  const SVG = "http://www.w3.org/2000/svg";
  const TOKEN_KEY = "tiletune-token";
  const POLL_MS = 2000;
  const STATUS_COLORS = {
    TRIAL_OK: "#2a9d3f",
    TRIAL_SLOWER: "#7f9bb3",
    TRIAL_TIMEOUT: "#e09b00",
    TRIAL_CRASH: "#c0392b",
    TRIAL_WRONG_RESULT: "#8e44ad",
    TRIAL_REJECTED: "#3d3d3d",
    TRIAL_COMPILE_ERROR: "#d35400",
    TRIAL_CANCELLED: "#b8c0c8",
    TRIAL_SKIPPED_KNOWN_FAILURE: "#95a5a6",
  };
  // Each route change bumps this; a poll of an older view stops.
  let generation = 0;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "onclick") node.addEventListener("click", value);
      else node.setAttribute(name, value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function short(name, prefix) {
    return String(name || "").replace(prefix, "").toLowerCase();
  }
  function num(value) {
    return Number(value || 0);
  }
  function us(value) {
    const v = num(value);
    return v > 0 ? v.toFixed(v < 10 ? 3 : 1) + " µs" : "—";
  }
  function when(timestamp) {
    return timestamp ? new Date(timestamp).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "—";
  }
  function params(map) {
    return Object.keys(map || {}).sort().map((k) => k + "=" + map[k]).join(" ");
  }
  function keyText(key) {
    if (!key) return "";
    const shape = (key.shape || []).map((d) => d.name + "=" + d.size).join(" ");
    const dtype = short(key.input_dtype, "DTYPE_");
    const op = key.op || (key.ops || []).map((o) => o.op).join("+") || "graph";
    return op + " " + shape + (dtype ? " " + dtype : "");
  }
  function table(headers, rows) {
    return el("table", {}, el("tr", {}, headers.map((h) => el("th", {}, h))),
      rows.map((r) => el("tr", {}, r.map((c) => el("td", {}, c)))));
  }
  // replaceChildren without the children a view leaves out (null).
  function replace(node, ...children) {
    node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
  }
  function message(text, kind) {
    return el("p", { class: kind || "note" }, text);
  }

  async function api(path, options) {
    const headers = Object.assign({}, (options && options.headers) || {});
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(path, Object.assign({}, options, { headers }));
    const body = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) {
      const error = new Error(response.status + ": " + (body.error || response.statusText));
      error.status = response.status;
      throw error;
    }
    return body;
  }
  // Every page of a listing; `limit` pages at most.
  async function allPages(path, field, limit) {
    let out = [];
    let token = "";
    let first = null, last = {};
    for (let page = 0; page < limit; ++page) {
      const sep = path.includes("?") ? "&" : "?";
      last = await api(path + (token ? sep + "page_token=" + encodeURIComponent(token) : ""));
      if (!first) first = last;
      out = out.concat(last[field] || []);
      token = last.next_page_token;
      if (!token) break;
    }
    return { items: out, first: first || {}, more: !!token };
  }

  // ---- charts ----
  function scale(lo, hi, a, b, log) {
    if (log) {
      lo = Math.log10(lo); hi = Math.log10(hi);
    }
    if (hi === lo) { hi = lo + 1; lo = lo - 1; }
    return (v) => a + ((log ? Math.log10(v) : v) - lo) / (hi - lo) * (b - a);
  }
  function ticks(lo, hi, log) {
    if (log) {
      // Powers of ten; 1-2-5 steps too when the data span less than two decades.
      const steps = hi / lo < 100 ? [1, 2, 5] : [1];
      const out = [];
      for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); ++e) {
        for (const m of steps) out.push(m * 10 ** e);
      }
      const inside = out.filter((t) => t >= lo / 1.0001 && t <= hi * 1.0001);
      return inside.length >= 2 ? inside : [...new Set([lo, hi])];
    }
    const step = (hi - lo) / 4 || 1;
    return [0, 1, 2, 3, 4].map((i) => lo + i * step);
  }
  function fmt(v) {
    const a = Math.abs(v);
    return a >= 1e4 || (a > 0 && a < 1e-2) ? v.toExponential(1) : String(+v.toPrecision(3));
  }
  // points: {x, y, color, title}; lines: {points: [[x, y]...], color};
  // untimed: {x, color, title}, drawn in a band above the plot.
  function chart(spec) {
    const W = 380, H = 230, L = 56, R = 10, T = spec.untimed && spec.untimed.length ? 34 : 20, B = 36;
    const all = spec.points.map((p) => [p.x, p.y]).concat(...spec.lines.map((l) => l.points));
    const root = svg("svg", { class: "chart", width: W, height: H, viewBox: "0 0 " + W + " " + H,
      "data-chart": spec.name || "" });
    root.appendChild(svg("text", { x: L, y: H - 4 }, spec.xLabel));
    root.appendChild(svg("text", { x: L + 4, y: 12 }, spec.yLabel));
    const xs = all.map((p) => p[0]).concat((spec.untimed || []).map((u) => u.x));
    const ys = all.map((p) => p[1]);
    if (!xs.length) {
      root.appendChild(svg("text", { x: L, y: H / 2 }, "nothing to plot"));
      return root;
    }
    const pos = (v) => v > 0;
    const xlo = Math.min(...xs), xhi = Math.max(...xs);
    const ylo = ys.length ? Math.min(...ys) : 1, yhi = ys.length ? Math.max(...ys) : 1;
    const logX = spec.logX && xs.every(pos), logY = spec.logY && ys.every(pos);
    const ypad = logY ? 1.15 : 0;
    const sx = scale(xlo, xhi, L + 6, W - R - 6, logX);
    const sy = scale(logY ? ylo / ypad : ylo, logY ? yhi * ypad : yhi, H - B, T + 14, logY);
    root.appendChild(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#9aa5b0" }));
    root.appendChild(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#9aa5b0" }));
    for (const t of ticks(xlo, xhi, logX)) {
      root.appendChild(svg("text", { x: sx(t) - 8, y: H - B + 13 }, fmt(t)));
    }
    if (ys.length) {
      for (const t of ticks(ylo, yhi, logY)) {
        root.appendChild(svg("text", { x: 2, y: sy(t) + 4 }, fmt(t)));
        root.appendChild(svg("line", { x1: L, y1: sy(t), x2: W - R, y2: sy(t), stroke: "#eef1f4" }));
      }
    }
    for (const line of spec.lines) {
      const d = line.points.map((p, i) => (i ? "L" : "M") + sx(p[0]).toFixed(1) + " " + sy(p[1]).toFixed(1));
      root.appendChild(svg("path", { d: d.join(" "), fill: "none", stroke: line.color, "stroke-width": 2,
        "stroke-dasharray": line.dashed ? "5 3" : "" }));
    }
    for (const p of spec.points) {
      const c = svg("circle", { cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: 4, fill: p.color,
        "fill-opacity": 0.8 });
      c.appendChild(svg("title", {}, p.title));
      root.appendChild(c);
    }
    if (spec.untimed && spec.untimed.length) {
      root.appendChild(svg("text", { x: 2, y: 28 }, "untimed"));
      for (const u of spec.untimed) {
        const c = svg("rect", { x: (sx(u.x) - 3).toFixed(1), y: 19, width: 6, height: 10, fill: u.color });
        c.appendChild(svg("title", {}, u.title));
        root.appendChild(c);
      }
    }
    return root;
  }

  // ---- a job item: trials, convergence, decision, compile reports ----
  function trialTime(t) {
    return t.timing ? num(t.timing.median_us) : 0;
  }
  function statusLegend(trials) {
    const counts = {};
    for (const t of trials) counts[t.status] = (counts[t.status] || 0) + 1;
    return el("div", { class: "legend" }, Object.keys(counts).sort().map((s) =>
      el("span", { "data-status": s }, el("span", { class: "swatch" }), short(s, "TRIAL_") + " " + counts[s])));
  }
  function colourLegend(legend) {
    for (const span of legend.querySelectorAll("[data-status]")) {
      span.firstChild.style.background = STATUS_COLORS[span.getAttribute("data-status")] || "#000";
    }
    return legend;
  }
  function parameterCharts(trials) {
    const names = [...new Set(trials.flatMap((t) => Object.keys(t.params || {})))].sort();
    return names.map((name) => {
      const points = [], untimed = [];
      for (const t of trials) {
        if (!(name in (t.params || {}))) continue;
        const x = num(t.params[name]);
        const title = (t.kernel_name || "") + " " + params(t.params) + ": " + short(t.status, "TRIAL_") +
          (trialTime(t) > 0 ? ", " + us(trialTime(t)) : "") + (t.error ? " — " + t.error : "");
        const color = STATUS_COLORS[t.status] || "#000";
        if (trialTime(t) > 0) points.push({ x, y: trialTime(t), color, title });
        else untimed.push({ x, color, title });
      }
      return chart({ name: "param-" + name, xLabel: name, yLabel: "µs", points, lines: [], untimed,
        logX: true, logY: true });
    });
  }
  function convergenceCharts(trials) {
    let best = Infinity;
    const byEval = [], bySeconds = [];
    const start = trials.length ? Date.parse(trials[0].finished_at || 0) : 0;
    trials.forEach((t, i) => {
      if (t.status === "TRIAL_OK" || t.status === "TRIAL_SLOWER") {
        if (trialTime(t) > 0) best = Math.min(best, trialTime(t));
      }
      if (best < Infinity) {
        byEval.push([i + 1, best]);
        if (t.finished_at) bySeconds.push([(Date.parse(t.finished_at) - start) / 1000, best]);
      }
    });
    return [
      chart({ name: "convergence-evaluations", xLabel: "evaluations", yLabel: "best µs", points: [],
        lines: [{ points: byEval, color: "#1565c0" }] }),
      chart({ name: "convergence-seconds", xLabel: "seconds since the first trial", yLabel: "best µs",
        points: [], lines: [{ points: bySeconds, color: "#1565c0" }] }),
    ];
  }
  function timingRow(name, timing, extra) {
    timing = timing || {};
    return [name, us(timing.median_us), us(timing.min_us), us(timing.max_us),
      num(timing.spread).toFixed(3), num(timing.repetitions), extra || ""];
  }
  function decisionView(record, jobId) {
    if (!record) return message("No record is stored for this key on the item's device class " +
      "(the item has not finished, found nothing correct, or runs on another daemon's device).");
    const d = record.decision || {};
    const out = el("div", { "data-field": "decision" });
    if (record.job_id && record.job_id !== jobId) {
      out.appendChild(message("The record now stored was measured by job " + record.job_id + "."));
    }
    out.appendChild(table(["", "value"], [
      ["winner", el("span", { "data-field": "winner" }, short(record.winner, "WINNER_"))],
      ["speedup over " + (record.baseline_name || "the baseline"),
        el("span", { "data-field": "speedup" }, num(record.speedup).toFixed(2) + "×")],
      ["kernel", record.config ? (record.config.kernel_name || "") + " " + params(record.config.params) : "—"],
      ["rounds", String(num(d.rounds))],
      ["noise (p75 − p25 of the ratios)", num(d.noise).toFixed(4)],
      ["measured margin / required", num(d.measured_margin).toFixed(4) + " / " + num(d.required_margin).toFixed(4)],
      ["reason", d.reason || "—"],
      ["roofline", record.roofline && num(record.roofline.fraction_of_floor) > 0
        ? (100 * num(record.roofline.fraction_of_floor)).toFixed(1) + "% of the floor"
        : "not known for this device (no ceilings) or not stored"],
    ]));
    out.appendChild(el("h3", {}, "Interleaved timings of the decision"));
    out.appendChild(table(["", "median", "min", "max", "spread", "reps", ""], [
      timingRow("winner", d.winner), timingRow("runner-up", d.runner_up, params(d.runner_up_params)),
      timingRow("baseline", d.baseline, record.baseline_name || "")]));
    return out;
  }
  function compileReports(trials) {
    const reported = trials.filter((t) => t.compile_report &&
      (num(t.compile_report.registers) > 0 || num(t.compile_report.shared_memory_bytes) > 0));
    const rows = trials.slice(0, 200).map((t) => {
      const c = t.compile_report || {};
      return [t.kernel_name || "", params(t.params), short(t.status, "TRIAL_"), String(num(c.registers)),
        String(num(c.shared_memory_bytes)), String(num(c.spill_bytes)), num(t.compile_seconds).toFixed(2),
        t.compile_cache_hit ? "yes" : "no", el("span", { class: "error" }, t.error || "")];
    });
    return el("div", {},
      reported.length ? null : message("The compiler reported no registers or shared memory for these " +
        "trials: the host backend reports none; GPU backends fill them."),
      trials.length > 200 ? message("The first 200 of " + trials.length + " trials.") : null,
      table(["kernel", "params", "status", "registers", "shared bytes", "spill bytes", "compile s",
        "cached", "error"], rows));
  }
  function itemView(job, item, detail) {
    const trials = detail.trials || [];
    const section = el("section", { "data-item": String(item.index) });
    section.appendChild(el("h2", {}, "Item " + item.index + ": " + keyText(item.key)));
    section.appendChild(table(["state", "trials", "benchmarked", "failed", "planned", "best", "baseline"], [[
      el("span", { class: "state-" + item.state }, short(item.state, "JOB_")),
      el("span", { "data-field": "trial-count" }, String(trials.length)),
      el("span", { "data-field": "benchmarked" }, String(num(item.benchmarked))),
      String(num(item.failed)), String(num(item.variants_planned)),
      el("span", { "data-field": "best" }, us(item.best_us)), us(item.baseline_us)]]));
    if (item.error) section.appendChild(el("p", { class: "error" }, item.error));
    if (detail.more) section.appendChild(message("Only the first pages of trials are shown."));
    section.appendChild(el("h3", {}, "Trials: time against each parameter"));
    section.appendChild(colourLegend(statusLegend(trials)));
    section.appendChild(el("div", { class: "charts" }, parameterCharts(trials)));
    section.appendChild(el("h3", {}, "Convergence (" + short((job.spec || {}).strategy, "STRATEGY_") + ")"));
    section.appendChild(el("div", { class: "charts" }, convergenceCharts(trials)));
    section.appendChild(el("h3", {}, "Decision"));
    section.appendChild(decisionView(detail.record, job.id));
    section.appendChild(el("h3", {}, "Compile reports"));
    section.appendChild(compileReports(trials));
    return section;
  }
  function progress(job) {
    let done = 0, planned = 0;
    for (const i of job.items || []) {
      done += num(i.benchmarked) + num(i.failed);
      planned += num(i.variants_planned);
    }
    return { done, planned };
  }
  function jobHeader(job) {
    const spec = job.spec || {};
    const p = progress(job);
    return el("section", { "data-job": job.id },
      el("h2", { "data-field": "job-name" }, spec.name || "(unnamed job)"),
      table(["id", "state", "device", "submitted by", "created", "started", "finished", "variants"], [[
        el("span", { class: "mono" }, job.id),
        el("span", { class: "state-" + job.state, "data-field": "state" }, short(job.state, "JOB_")),
        job.device, job.submitted_by || "the daemon", when(job.created_at), when(job.started_at),
        when(job.finished_at), p.done + " / " + p.planned]]),
      job.error ? el("p", { class: "error" }, job.error) : null);
  }
  function renderJob(target, job, details) {
    replace(target, jobHeader(job), ...(job.items || []).map((item, i) => itemView(job, item, details[i])));
  }

  // ---- pages served by the daemon ----
  function isActive(job) {
    return job.state === "JOB_QUEUED" || job.state === "JOB_RUNNING";
  }
  function poll(mine, fn) {
    setTimeout(() => { if (mine === generation) fn(); }, POLL_MS);
  }
  async function cancel(jobId, status) {
    try {
      await api("/api/jobs/" + encodeURIComponent(jobId) + "/cancel",
        { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
      status.textContent = "cancelled " + jobId;
    } catch (e) {
      status.textContent = "cancel refused: " + e.message;
    }
  }
  async function jobsPage(target, query) {
    const mine = generation;
    const status = el("p", { class: "error", id: "status" });
    const box = el("section", {});
    replace(target, el("h1", {}, "Jobs"), status, box);
    async function load() {
      try {
        const page = await api("/api/jobs?page_size=50" +
          (query.get("page_token") ? "&page_token=" + encodeURIComponent(query.get("page_token")) : ""));
        const jobs = page.jobs || [];
        const rows = jobs.map((j) => {
          const p = progress(j);
          return [el("a", { href: "#/job/" + encodeURIComponent(j.id), class: "mono" }, j.id),
            (j.spec || {}).name || "", el("span", { class: "state-" + j.state }, short(j.state, "JOB_")),
            el("span", {}, el("progress", { max: String(Math.max(p.planned, 1)), value: String(p.done) }),
              " " + p.done + "/" + p.planned),
            String((j.items || []).length), j.submitted_by || "the daemon", when(j.created_at),
            when(j.started_at), when(j.finished_at),
            isActive(j) ? el("button", { "data-cancel": j.id, onclick: () => cancel(j.id, status) }, "cancel") : ""];
        });
        replace(box, jobs.length ? table(["job", "name", "state", "progress", "items",
          "submitted by", "created", "started", "finished", ""], rows) : message("No jobs."),
        page.next_page_token ? el("a", { href: "#/jobs?page_token=" + encodeURIComponent(page.next_page_token) }, "next page") : null);
        if (jobs.some(isActive)) poll(mine, load);
      } catch (e) {
        status.textContent = e.message;
      }
    }
    await load();
  }
  // Each item's trials and record; an item that has ended is read once
  // (`finished` keeps it) while the page polls the others.
  async function jobDetails(jobId, job, finished) {
    const base = "/api/jobs/" + encodeURIComponent(jobId) + "/items/";
    return Promise.all((job.items || []).map(async (item) => {
      if (finished.has(item.index)) return finished.get(item.index);
      const pages = await allPages(base + item.index + "/trials", "trials", 20);
      const detail = { trials: pages.items, record: pages.first.record || null, more: pages.more };
      if (!isActive(item)) finished.set(item.index, detail);
      return detail;
    }));
  }
  async function jobPage(target, jobId) {
    const mine = generation;
    const status = el("p", { class: "error", id: "status" });
    const body = el("div", {});
    const finished = new Map();
    replace(target, el("h1", {}, "Job"), status, body);
    async function load() {
      try {
        const job = await api("/api/jobs/" + encodeURIComponent(jobId));
        renderJob(body, job, await jobDetails(jobId, job, finished));
        if (isActive(job)) {
          body.firstChild.appendChild(el("button", { "data-cancel": job.id, onclick: () => cancel(job.id, status) }, "cancel"));
          poll(mine, load);
        }
      } catch (e) {
        status.textContent = e.message;
      }
    }
    await load();
  }
  function rooflineChart(deviceClass, records) {
    const points = [], lines = [];
    let ceilings = null;
    for (const r of records) {
      const f = r.roofline || {};
      if (num(f.flops) > 0 && num(f.bytes) > 0 && num(f.achieved_tflops) > 0) {
        points.push({ x: num(f.flops) / num(f.bytes), y: num(f.achieved_tflops),
          color: r.winner === "WINNER_TUNED" ? "#2a9d3f" : "#7f9bb3", title: keyText(r.key) });
        if (f.ceilings && num(f.ceilings.peak_tflops) > 0) ceilings = f.ceilings;
      }
    }
    if (!points.length) return null;
    if (ceilings) {
      const xs = points.map((p) => p.x);
      const lo = Math.min(...xs) / 2, hi = Math.max(...xs) * 2;
      const peak = num(ceilings.peak_tflops), bw = num(ceilings.peak_bandwidth_tbps);
      const knee = peak / bw;
      const roof = [[lo, Math.min(peak, lo * bw)]];
      if (knee > lo && knee < hi) roof.push([knee, peak]);
      roof.push([hi, Math.min(peak, hi * bw)]);
      lines.push({ points: roof, color: "#c0392b", dashed: true });
    }
    return el("div", {}, el("h3", {}, "Roofline of " + deviceClass),
      ceilings ? null : message("No ceilings are known for this device class (the host CPU): achieved TFLOP/s only."),
      chart({ name: "roofline", xLabel: "FLOP per byte", yLabel: "TFLOP/s", points, lines, logX: true, logY: true }));
  }
  async function recordsPage(target, query) {
    const status = el("p", { class: "error", id: "status" });
    const op = query.get("op") || "", cls = query.get("device_class") || "", winner = query.get("winner") || "";
    const form = el("form", { class: "filters" },
      el("label", {}, "op ", el("input", { name: "op", value: op })),
      el("label", {}, "device class ", el("input", { name: "device_class", value: cls })),
      el("label", {}, "winner ", el("select", { name: "winner" },
        ["", "WINNER_TUNED", "WINNER_VENDOR"].map((w) => {
          const o = el("option", { value: w }, w ? short(w, "WINNER_") : "any");
          if (w === winner) o.setAttribute("selected", "");
          return o;
        }))),
      el("button", { type: "submit" }, "filter"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const q = new URLSearchParams(new FormData(form));
      location.hash = "#/records?" + q.toString();
    });
    const box = el("div", {});
    replace(target, el("h1", {}, "Records"), el("section", {}, form, status, box));
    try {
      const q = new URLSearchParams({ op, device_class: cls, page_size: "100" });
      if (query.get("page_token")) q.set("page_token", query.get("page_token"));
      const page = await api("/api/records?" + q.toString());
      // The API filters by op and class; the winner is filtered here, on the page.
      const records = (page.records || []).filter((r) => !winner || r.winner === winner);
      const rows = records.map((r) => [keyText(r.key), el("span", { class: "mono" }, r.device_class),
        short(r.winner, "WINNER_"), num(r.speedup).toFixed(2) + "×", us(r.tuned && r.tuned.median_us),
        (r.baseline_name || "") + " " + us(r.baseline && r.baseline.median_us),
        r.roofline && num(r.roofline.fraction_of_floor) > 0 ? (100 * num(r.roofline.fraction_of_floor)).toFixed(1) + "%" : "—",
        r.job_id ? el("a", { href: "#/job/" + encodeURIComponent(r.job_id), class: "mono" }, r.job_id) : "",
        when(r.measured_at)]);
      const byClass = {};
      for (const r of records) (byClass[r.device_class] = byClass[r.device_class] || []).push(r);
      replace(box, 
        records.length ? table(["key", "device class", "winner", "speedup", "tuned", "baseline",
          "% of roofline", "job", "measured"], rows) : message("No records."),
        page.next_page_token ? el("a", { href: "#/records?" + new URLSearchParams({ op, device_class: cls, winner,
          page_token: page.next_page_token }).toString() }, "next page") : null,
        el("div", { class: "charts" }, Object.keys(byClass).sort().map((c) => rooflineChart(c, byClass[c]))));
    } catch (e) {
      status.textContent = e.message;
    }
  }
  async function devicesPage(target) {
    const mine = generation;
    const status = el("p", { class: "error", id: "status" });
    const box = el("div", {});
    replace(target, el("h1", {}, "Devices and fleet"), status, box);
    async function load() {
      try {
        const d = await api("/api/devices");
        replace(box, 
          el("section", {}, el("h2", {}, "This daemon"), table(["daemon", "version", "started"],
            [[d.daemon, d.version, when(d.started_at)]])),
          el("section", {}, el("h2", {}, "Backends"), table(["backend", "available", "reason"],
            (d.backends || []).map((b) => [b.name, b.available ? "yes" : "no", b.reason || ""]))),
          el("section", {}, el("h2", {}, "Devices"), table(["id", "backend", "name", "state", "running job",
            "worker restarts"], (d.devices || []).map((v) => [v.id, v.backend, (v.fingerprint || {}).name || "",
            short(v.state, "STATE_"), v.running_job_id || "", String(num(v.worker_restarts))]))),
          el("section", {}, el("h2", {}, "Fleet"), d.fleet_unknown ? message(d.fleet_unknown) : null,
            table(["daemon", "address", "version", "last heartbeat", "age", "gone", "devices"],
              (d.fleet || []).map((f) => [f.daemon_id, f.address, f.version, when(f.last_heartbeat),
                num(f.heartbeat_age_seconds).toFixed(1) + " s", f.gone ? "gone" : "live",
                (f.devices || []).map((v) => v.id + " (" + short(v.state, "STATE_") + ")").join(", ")]))));
        poll(mine, load);
      } catch (e) {
        status.textContent = e.message;
      }
    }
    await load();
  }
  function nav() {
    const input = el("input", { type: "password", placeholder: "bearer token (kept in this tab)",
      autocomplete: "off" });
    const save = el("button", { onclick: () => {
      if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value);
      else sessionStorage.removeItem(TOKEN_KEY);
      input.value = "";
      route();
    } }, sessionStorage.getItem(TOKEN_KEY) ? "change token" : "use token");
    return el("nav", {}, el("a", { href: "#/jobs" }, "Jobs"), el("a", { href: "#/records" }, "Records"),
      el("a", { href: "#/devices" }, "Devices"), el("span", { class: "token" }, input, save));
  }
  function route() {
    ++generation;
    const hash = location.hash.replace(/^#/, "") || "/jobs";
    const [path, search] = hash.split("?");
    const query = new URLSearchParams(search || "");
    const page = el("div", {});
    replace(main, nav(), page);
    if (path.startsWith("/job/")) return jobPage(page, decodeURIComponent(path.slice(5)));
    if (path === "/records") return recordsPage(page, query);
    if (path === "/devices") return devicesPage(page);
    return jobsPage(page, query);
  }

  if (standalone) {
    const body = el("div", {});
    replace(main, body);
    renderJob(body, standalone.job, standalone.items.map((d) => ({ trials: d.trials || [], record: d.record || null })));
    body.appendChild(message("Written by tiletune report at " + when(standalone.written_at) + "."));
  } else {
    window.addEventListener("hashchange", route);
    route();
  }
})();
