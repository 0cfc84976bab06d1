// The analysis page with the campaign's setting shows the campaign's stored results: when the
// background analysis stores newer ones (after new judgments, a decision or a setting change),
// they replace the results on the page without a reload. The page asks the dashboard's status
// (the same JSON the dashboard polls): quickly while its results are out of date, slowly after.
(function () {
  "use strict";

  // Settings analysed by a background job (a large campaign explored with other settings):
  // its progress, then the page again, which finds the result in the cache.
  const explore = document.getElementById("explore-progress");
  if (explore) {
    const text = document.getElementById("explore-text");
    const followExploration = () => {
      fetch(explore.dataset.exploreUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then((response) => {
          if (!response.ok) throw new Error(String(response.status));
          return response.json();
        })
        .then((state) => {
          if (state.ready) {
            window.location.reload();
            return;
          }
          if (state.status === "failed") {
            const error = document.getElementById("explore-error");
            error.textContent = state.error;
            error.hidden = false;
            return;
          }
          document.getElementById("explore-bar").value = state.percent;
          if (state.total) text.textContent = `${state.done} / ${state.total}`;
          setTimeout(followExploration, 1500);
        })
        .catch(() => setTimeout(followExploration, 5000));
    };
    setTimeout(followExploration, 1000);
  }

  let root = document.getElementById("analysis-results");
  if (!root || !root.dataset.statusUrl) return;
  const statusUrl = root.dataset.statusUrl;
  let swapping = false;

  function waiting() {
    return root.dataset.waiting === "1";
  }

  // The page as the server renders it now; its results part (with the report links) replaces
  // this one's.
  function showNewResults() {
    if (swapping) return Promise.resolve();
    swapping = true;
    return fetch(window.location.href, { headers: { Accept: "text/html" }, credentials: "same-origin" })
      .then((response) => {
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      })
      .then((html) => {
        const doc = new DOMParser().parseFromString(html, "text/html");
        const fresh = doc.getElementById("analysis-results");
        if (!fresh) throw new Error("layout");
        const node = document.importNode(fresh, true);
        root.replaceWith(node);
        root = node;
        // The settings shown follow the campaign's (a changed setting is why there are new
        // results), unless the organizer is editing them.
        const panel = document.getElementById("analysis-settings-panel");
        const freshPanel = doc.getElementById("analysis-settings-panel");
        if (panel && freshPanel && !panel.open && !panel.contains(document.activeElement)) {
          panel.replaceWith(document.importNode(freshPanel, true));
        }
      })
      .finally(() => {
        swapping = false;
      });
  }

  function check(status) {
    const newer = status.has_results && status.results_job_id && status.results_job_id !== root.dataset.resultsJob;
    if (newer && !status.stale) return showNewResults();
    return Promise.resolve();
  }

  function poll() {
    if (document.hidden) {
      setTimeout(poll, 5000);
      return;
    }
    fetch(statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => {
        if (!response.ok) throw new Error(String(response.status));
        return response.json();
      })
      .then(check)
      .catch(() => {})
      .finally(() => setTimeout(poll, waiting() ? 2000 : 15000));
  }

  setTimeout(poll, waiting() ? 2000 : 15000);
})();
