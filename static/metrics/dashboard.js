// The campaign dashboard: plots from the stored results (plotly, served from the installed
// package) and live status. Data comes from the json_script blocks "dashboard-plots" and
// "dashboard-status"; translated labels from data-t-* attributes of #dashboard.
(function () {
  "use strict";

  const root = document.getElementById("dashboard");
  if (!root) return;
  let plots = JSON.parse(document.getElementById("dashboard-plots").textContent);
  const t = (key) => root.dataset["t" + key.charAt(0).toUpperCase() + key.slice(1)] || key;
  const PLOT_CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  const FONT = { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 };
  const COLORS = ["#2c5fdb", "#d9822b", "#1c7c45", "#b3261e", "#7b4fc9", "#0f8b8d", "#a05a2c", "#c7417b", "#5d6678", "#8aa000"];

  // Plotly reads a few HTML tags in text; names come from uploads, so entities only.
  function esc(value) {
    return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function num(value, digits) {
    return value === null || value === undefined ? "—" : Number(value).toFixed(digits);
  }
  function pval(value) {
    if (value === null || value === undefined) return "—";
    return value < 0.001 ? value.toExponential(1) : String(Number(value.toPrecision(2)));
  }
  function layout(extra) {
    return Object.assign({ font: FONT, margin: { l: 56, r: 12, t: 12, b: 48 }, paper_bgcolor: "#fff", plot_bgcolor: "#fff" }, extra);
  }

  // An axis title broken over lines of at most ``room`` pixels (about 7 px a character at the
  // plots' font): a long title on a short axis would otherwise run past the plot and be cut.
  function wrapTitle(text, room) {
    const width = Math.max(8, Math.floor(room / 7));
    const lines = [];
    String(text).split(" ").forEach((word) => {
      const last = lines.length - 1;
      if (last >= 0 && (lines[last] + " " + word).length <= width) lines[last] += " " + word;
      else lines.push(word);
    });
    return lines.join("<br>");
  }
  // On a phone, long system names are cut on the axes (the whole name is in the hover text).
  function shortName(name, narrow) {
    return narrow && name.length > 18 ? name.slice(0, 17) + "…" : name;
  }

  // Per-annotator histograms of raw scores: grouped bars of shares; a heatmap when there are
  // too many annotators for bars to be read.
  function histogram(el, h) {
    const labels = h.bins.map((b, i) =>
      h.bin_width > 1 ? b + "–" + (i === h.bins.length - 1 ? b + h.bin_width : b + h.bin_width - 1) : String(b));
    const shares = h.annotators.map((a) => {
      const total = a.counts.reduce((x, y) => x + y, 0) || 1;
      return a.counts.map((c) => (100 * c) / total);
    });
    const xaxis = { title: { text: esc(t("score")) }, type: "category", automargin: true, tickangle: labels.length > 6 ? -45 : 0 };
    if (h.annotators.length > 12) {
      // One row per annotator; past ~60 rows plotly thins the labels and hover names them.
      const height = Math.min(900, Math.max(320, 60 + 14 * h.annotators.length));
      el.style.height = height + "px";
      Plotly.newPlot(el, [{
        type: "heatmap", x: labels, y: h.annotators.map((a) => esc(a.username)), z: shares,
        colorscale: [[0, "#f4f6fb"], [1, "#1f47a8"]], colorbar: { title: { text: "%" }, thickness: 10 },
        customdata: h.annotators.map((a) => a.counts),
        hovertemplate: "%{y}<br>%{x}: %{z:.1f}% (%{customdata} " + esc(t("judgments")) + ")<extra></extra>",
      }], layout({ height: height, xaxis: xaxis, yaxis: { automargin: true, autorange: "reversed" }, margin: { l: 60, r: 12, t: 12, b: 48 } }), PLOT_CONFIG);
      return;
    }
    const traces = h.annotators.map((a, i) => ({
      type: "bar", name: esc(a.username), x: labels, y: shares[i], customdata: a.counts,
      marker: { color: COLORS[i % COLORS.length] },
      hovertemplate: esc(a.username) + "<br>%{x}: %{y:.1f}% (%{customdata} " + esc(t("judgments")) + ")<extra></extra>",
    }));
    // The legend goes above the bars, so that the x axis' title has the room below them; the y
    // axis' title is wrapped to the height the bars get.
    const room = (el.clientHeight || 320) - 120;
    Plotly.newPlot(el, traces, layout({
      barmode: "group", bargap: 0.2, xaxis: xaxis,
      yaxis: { title: { text: wrapTitle(esc(t("share")), room) }, rangemode: "tozero", automargin: true },
      legend: { orientation: "h", x: 0, xanchor: "left", y: 1.02, yanchor: "bottom" },
      margin: { l: 56, r: 12, t: 12, b: 48 },
    }), PLOT_CONFIG);
  }

  // Head-to-head significance: green/red where the row system wins/loses with p < 0.05.
  function heatmap(el, h) {
    const names = h.systems.map(esc);
    const text = h.bootstrap_p.map((row, i) => row.map((p, j) => (i === j ? "" : pval(p))));
    const hover = h.delta.map((row, i) => row.map((d, j) => (i === j ? "" :
      names[i] + " vs " + names[j] + "<br>" + esc(t("delta")) + ": " + num(d, 2) +
      "<br>" + esc(t("pBoot")) + ": " + pval(h.bootstrap_p[i][j]) +
      "<br>" + esc(t("pAr")) + ": " + pval(h.ar_p[i][j]) +
      "<br>" + esc(t("wins")) + ": " + num(h.win_share[i][j], 2))));
    const z = h.outcome.map((row, i) => row.map((v, j) => (i === j ? null : v)));
    const n = names.length;
    // Cells wide enough for their p-value ("0.005" at 9 px): on a narrow screen the plot gets
    // wider than its card and the card scrolls sideways, rather than squeezing the cells.
    const scroller = el.parentElement;
    const narrow = window.matchMedia("(max-width: 600px)").matches;  // a phone, as the CSS says
    const labels = h.systems.map((name) => esc(shortName(name, narrow)));
    const labelRoom = 24 + 6 * Math.max.apply(null, h.systems.map((name) => shortName(name, narrow).length));
    const wanted = labelRoom + 40 * n;
    scroller.classList.add("plot-scroll");
    el.style.minWidth = scroller.clientWidth && wanted > scroller.clientWidth ? wanted + "px" : "";
    const cell = ((el.clientWidth || wanted) - labelRoom) / n;
    const height = Math.max(320, labelRoom + 20 + Math.max(26, Math.min(cell, 40)) * n);
    el.style.height = height + "px";
    const ticks = { tickmode: "array", tickvals: names, ticktext: labels, tickfont: { size: n > 12 ? 9 : 11 }, automargin: true };
    Plotly.newPlot(el, [{
      type: "heatmap", x: names, y: names, z: z, zmin: -1, zmax: 1, showscale: false, xgap: 1, ygap: 1,
      colorscale: [[0, "#e4877f"], [0.5, "#e9ecf2"], [1, "#6cc08e"]],
      text: text, texttemplate: cell >= 30 ? "%{text}" : "", textfont: { size: cell >= 44 ? 11 : 9 },
      customdata: hover, hovertemplate: "%{customdata}<extra></extra>",
    }], layout({
      height: height,
      margin: { l: 60, r: 12, t: 12, b: 60 },
      xaxis: Object.assign({ side: "bottom", tickangle: -45 }, ticks),
      yaxis: Object.assign({ autorange: "reversed" }, ticks),
    }), PLOT_CONFIG);
  }

  // Metric against human score, one point per system, with the least-squares line.
  function scatter(el, s, m) {
    const xs = m.points.map((p) => p.metric);
    const ys = m.points.map((p) => p.human);
    const lo = Math.min.apply(null, xs);
    const hi = Math.max.apply(null, xs);
    const pad = (values) => {
      const a = Math.min.apply(null, values);
      const b = Math.max.apply(null, values);
      const d = (b - a) * 0.15 || Math.abs(a) * 0.1 || 1;
      return [a - d, b + d];
    };
    const metricLabel = (m.oriented ? "−" : "") + m.label;
    const traces = [{
      // Names beside the points while they can be read; with many systems, on hover only.
      type: "scatter", mode: m.points.length <= 8 ? "markers+text" : "markers", name: esc(metricLabel),
      x: xs, y: ys, text: m.points.map((p) => esc(p.name)), cliponaxis: false,
      textposition: "top center", textfont: { size: 10 }, marker: { size: 9, color: COLORS[0] },
      hovertemplate: "%{text}<br>" + esc(metricLabel) + ": %{x:.2f}<br>" + esc(s.human) + ": %{y:.3f}<extra></extra>",
    }];
    if (m.fit && m.fit.slope !== null && m.fit.slope !== undefined) {
      traces.push({
        type: "scatter", mode: "lines", name: esc(t("fit")), x: [lo, hi],
        y: [m.fit.intercept + m.fit.slope * lo, m.fit.intercept + m.fit.slope * hi],
        line: { color: "#9aa3b5", dash: "dash", width: 1.5 }, hoverinfo: "skip",
      });
    }
    Plotly.newPlot(el, traces, layout({
      showlegend: false,
      xaxis: { title: { text: esc(metricLabel) }, zeroline: false, range: pad(xs) },
      yaxis: { title: { text: esc(t("human") + " (" + s.human + ")") }, zeroline: false, range: pad(ys) },
      annotations: m.pearson === null ? [] : [{
        xref: "paper", yref: "paper", x: 0.02, y: 0.98, xanchor: "left", yanchor: "top", showarrow: false,
        text: "r = " + num(m.pearson, 3), font: { size: 12, color: "#5d6678" },
      }],
    }), PLOT_CONFIG);
  }

  function drawScatter(index) {
    const grid = document.getElementById("scatter-grid");
    const s = plots.scatter[index];
    if (!grid || !s) return;
    grid.querySelectorAll(".plot").forEach((el) => Plotly.purge(el));
    grid.replaceChildren();
    // Every card first, then the plots: each plot takes its card's width when drawn, and the
    // grid's columns are only settled once all cards are in.
    const cells = s.metrics.map((m) => {
      const figure = document.createElement("figure");
      figure.className = "plot-card";
      const caption = document.createElement("figcaption");
      caption.textContent = (m.oriented ? "−" : "") + m.label;
      const el = document.createElement("div");
      el.className = "plot";
      el.dataset.plot = "scatter";
      figure.append(caption, el);
      grid.append(figure);
      return el;
    });
    cells.forEach((el, i) => scatter(el, s, s.metrics[i]));
  }

  function drawAll() {
    document.querySelectorAll("[data-plot=histogram]").forEach((el) => histogram(el, plots.histograms[+el.dataset.index]));
    document.querySelectorAll("[data-plot=heatmap]").forEach((el) => heatmap(el, plots.heatmaps[+el.dataset.index]));
    const select = document.getElementById("scatter-criterion");
    if (select) {
      select.addEventListener("change", () => drawScatter(+select.value));
      drawScatter(+select.value);
    }
  }

  // Live status: the latest job and the annotation progress, polled every 2 s while a job is
  // queued or running, every 15 s otherwise.
  let resultsJob = root.dataset.resultsJob;
  let failures = 0;

  // When a job has stored new results, the result panels come from a fresh copy of the page:
  // the organizer sees them without reloading, where they were reading. Should the copy not
  // fit this page, the "New results are ready" flag offers a reload instead.
  const RESULT_PANELS = ["results-line", "qc", "histograms", "human", "metrics", "multeval", "correlations", "heatmaps", "downloads"];
  let swapping = false;

  function showNewResults() {
    if (swapping) return;
    swapping = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then((response) => { if (!response.ok) throw new Error(response.status); return response.text(); })
      .then((html) => {
        const fresh = new DOMParser().parseFromString(html, "text/html");
        const freshRoot = fresh.getElementById("dashboard");
        const ids = RESULT_PANELS.filter((id) => document.getElementById(id));
        if (!freshRoot || ids.some((id) => !fresh.getElementById(id))) throw new Error("layout");
        if (window.Plotly) document.querySelectorAll(".js-plotly-plot").forEach((el) => Plotly.purge(el));
        ids.forEach((id) => document.getElementById(id).replaceWith(document.importNode(fresh.getElementById(id), true)));
        plots = JSON.parse(fresh.getElementById("dashboard-plots").textContent);
        resultsJob = freshRoot.dataset.resultsJob;
        root.dataset.resultsJob = resultsJob;
        document.getElementById("reload-flag").hidden = true;
        if (window.Plotly) drawAll();
      })
      .catch(() => { document.getElementById("reload-flag").hidden = false; })
      .finally(() => { swapping = false; });
  }

  function setText(selector, value) {
    document.querySelectorAll(selector).forEach((el) => { el.textContent = value; });
  }

  function showStatus(status) {
    const job = status.job;
    const badge = document.getElementById("job-status");
    if (job) {
      badge.textContent = job.status_label;
      badge.className = "badge job-" + job.status;
      setText("#job-stage", job.stage_label);
      document.getElementById("job-progress").value = job.percent;
      setText("#job-percent", job.percent + "%");
      const error = document.getElementById("job-error");
      error.textContent = job.error;
      error.hidden = !job.error;
    }
    document.getElementById("stale-flag").hidden = !status.stale;
    document.getElementById("stale-recomputing").hidden = !status.recomputing;
    document.getElementById("fresh-flag").hidden = status.stale || !status.has_results || (status.results_job_id !== resultsJob && !!resultsJob);
    if (status.has_results && status.results_job_id && status.results_job_id !== resultsJob) showNewResults();
    const p = status.progress;
    ["judged_text", "needed_text", "percent", "remaining_text", "seconds_display", "remaining_display"].forEach((key) => setText('[data-live="' + key + '"]', p[key]));
    const overall = document.querySelector('[data-live-bar="overall"]');
    if (overall) overall.value = p.percent;
    p.configs.forEach((c) => {
      const row = document.querySelector('#progress-configs tr[data-config="' + c.config_id + '"]');
      if (!row) return;
      row.querySelectorAll("[data-live-config]").forEach((el) => { el.textContent = c[el.dataset.liveConfig]; });
      const bar = row.querySelector("[data-live-bar]");
      if (bar) bar.value = c.percent;
    });
    // Quick polls while a job is under way; a job still waiting for the queue to come back
    // is retried by every poll on the server, so those come slowly.
    if (!job || !(job.status === "queued" || job.status === "running")) return false;
    return job.status === "running" || job.dispatched;
  }

  function poll() {
    if (document.hidden) { setTimeout(poll, 5000); return; }
    fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => { if (!response.ok) throw new Error(response.status); return response.json(); })
      .then((status) => {
        failures = 0;
        document.getElementById("poll-error").hidden = true;
        setTimeout(poll, showStatus(status) ? 2000 : 15000);
      })
      .catch(() => {
        failures += 1;
        const note = document.getElementById("poll-error");
        note.textContent = t("pollFailed");
        note.hidden = false;
        setTimeout(poll, Math.min(60000, 5000 * failures));
      });
  }

  function start() {
    const initial = JSON.parse(document.getElementById("dashboard-status").textContent);
    const active = showStatus(initial);
    if (window.Plotly) drawAll();
    setTimeout(poll, active ? 2000 : 15000);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
