// The annotation setup page: while a task build is queued or running, poll the builds'
// status (data-builds-url) and show each build's state, progress and message in its row.
// When the last build ends, the page reloads to show the new tasks — unless a form on it
// has been edited, whose input a reload would throw away. Without JS the row's "Refresh"
// link does the same.
(function () {
  "use strict";

  const root = document.getElementById("protocols-section");
  if (!root || root.dataset.buildsActive !== "1") return;
  let failures = 0;
  let edited = false;
  document.addEventListener("input", () => { edited = true; });
  document.querySelectorAll("[data-build-refresh]").forEach((el) => { el.hidden = true; });

  function show(build) {
    const row = document.querySelector('tr[data-build-config="' + build.config + '"]');
    if (!row) return;
    row.dataset.buildStatus = build.status;
    const status = row.querySelector('[data-build-field="status"]');
    status.textContent = build.status_label;
    status.className = "badge build-" + build.status;
    const bar = row.querySelector('[data-build-field="progress"]');
    bar.value = build.percent;
    bar.hidden = !(build.status === "running" && build.total);
    const message = row.querySelector('[data-build-field="message"]');
    message.textContent = build.message;
    message.classList.toggle("error", build.status === "failed");
    if (build.status === "done") {
      const config = document.getElementById("config-" + build.config);
      // The protocol's row: name, protocol, k, tasks, items, …
      if (config) {
        config.cells[3].textContent = build.tasks_text;
        config.cells[4].textContent = build.items_text;
      }
    }
  }

  function poll() {
    fetch(root.dataset.buildsUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => { if (!response.ok) throw new Error(response.status); return response.json(); })
      .then((status) => {
        failures = 0;
        status.builds.forEach(show);
        if (status.active) setTimeout(poll, 1000);
        else if (!edited) window.location.reload();
      })
      .catch(() => {
        failures += 1;
        setTimeout(poll, Math.min(30000, 2000 * failures));
      });
  }

  setTimeout(poll, 1000);
})();
