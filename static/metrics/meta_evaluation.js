// The meta-evaluation page: one scatter plot per metric (metric score against human score, one
// point per evaluated system, outliers left out in grey), from the json_script block
// "meta-evaluation-plot"; translated labels from data-t-* attributes of the grid.
(function () {
  "use strict";

  const grid = document.getElementById("meta-evaluation-plots");
  const source = document.getElementById("meta-evaluation-plot");
  if (!grid || !source || !window.Plotly) return;
  const data = JSON.parse(source.textContent);
  const t = (key) => grid.dataset["t" + key.charAt(0).toUpperCase() + key.slice(1)] || key;
  const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  const FONT = { family: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", size: 12 };

  // Plotly reads a few HTML tags in text; names come from uploads, so entities only.
  function esc(value) {
    return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function trace(points, label, color, few) {
    return {
      type: "scatter", mode: few ? "markers+text" : "markers", name: esc(label),
      x: points.map((p) => p.metric), y: points.map((p) => p.human),
      text: points.map((p) => esc(p.name)), cliponaxis: false, textposition: "top center",
      textfont: { size: 10 }, marker: { size: 9, color: color },
      hovertemplate: "%{text}<br>%{x:.4g}<br>" + esc(t("human")) + ": %{y:.3f}<extra></extra>",
    };
  }

  function draw(el, m) {
    const label = (m.negated ? "−" : "") + m.name;
    const few = m.points.length + m.outliers.length <= 8;
    const traces = [trace(m.points, label, "#2c5fdb", few)];
    if (m.outliers.length) traces.push(trace(m.outliers, t("outlier"), "#9aa3b5", few));
    Plotly.newPlot(el, traces, {
      font: FONT, margin: { l: 56, r: 12, t: 12, b: 48 }, paper_bgcolor: "#fff", plot_bgcolor: "#fff",
      showlegend: m.outliers.length > 0, legend: { orientation: "h", y: -0.25 },
      xaxis: { title: { text: esc(label) }, zeroline: false, automargin: true },
      yaxis: { title: { text: esc(t("human")) }, zeroline: false, automargin: true },
      annotations: m.pearson === null ? [] : [{
        xref: "paper", yref: "paper", x: 0.02, y: 0.98, xanchor: "left", yanchor: "top", showarrow: false,
        text: "r = " + Number(m.pearson).toFixed(3), font: { size: 12, color: "#5d6678" },
      }],
    }, CONFIG);
  }

  // Every card first, then the plots: each takes its card's width once the grid is settled.
  const cells = data.metrics.map((m) => {
    const figure = document.createElement("figure");
    figure.className = "plot-card";
    const caption = document.createElement("figcaption");
    caption.textContent = (m.negated ? "−" : "") + m.name;
    const el = document.createElement("div");
    el.className = "plot";
    el.dataset.plot = "scatter";
    figure.append(caption, el);
    grid.append(figure);
    return el;
  });
  cells.forEach((el, i) => draw(el, data.metrics[i]));
})();
