// The page of one judgment import: while it is queued or running, poll its status
// (data-status-url, the API's view of the job) and show its state, step and message; when it
// ends, reload the page, which then shows what was stored or the problems of the file.
// Without JS the "Refresh" link does the same.
(function () {
  "use strict";

  const root = document.getElementById("import-job");
  if (!root || !["queued", "running"].includes(root.dataset.jobStatus)) return;
  const field = (name) => root.querySelector('[data-job-field="' + name + '"]');
  let failures = 0;

  function show(job) {
    const status = field("status");
    status.textContent = job.status_label;
    status.className = "badge build-" + job.status;
    field("progress").value = job.percent;
    field("message").textContent = job.message;
    root.dataset.jobStatus = job.status;
  }

  function poll() {
    fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => { if (!response.ok) throw new Error(response.status); return response.json(); })
      .then((job) => {
        failures = 0;
        show(job);
        if (job.active) setTimeout(poll, 1000);
        else window.location.reload();
      })
      .catch(() => {
        failures += 1;
        setTimeout(poll, Math.min(30000, 2000 * failures));
      });
  }

  setTimeout(poll, 1000);
})();
