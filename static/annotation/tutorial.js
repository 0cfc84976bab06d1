// The tutorial's feedback: after each tutorial answer (stored by annotation.tutorial's submit),
// annotate.js hands the answer's verdict here instead of moving on. The page then shows whether
// the answer met the expectation, what it missed, the organizer's words and, after the last
// item, the rule's outcome; Continue (or Enter on it) goes where the server says.
(function () {
  "use strict";

  const box = document.getElementById("tutorial-feedback");
  if (!box) return;
  const data = JSON.parse(document.getElementById("annotate-data").textContent);
  const next = document.getElementById("tutorial-next");

  function show(body) {
    box.classList.toggle("met", body.met);
    box.classList.toggle("missed", !body.met);
    box.querySelector(".verdict").textContent = body.met
      ? data.feedback.met
      : data.feedback.missed;
    const notes = box.querySelector(".notes");
    notes.textContent = "";
    (body.notes || []).forEach((note) => {
      const li = document.createElement("li");
      li.textContent = note;
      notes.appendChild(li);
    });
    notes.hidden = !(body.notes || []).length;
    const organizer = box.querySelector(".organizer-feedback");
    organizer.textContent = body.feedback || "";
    organizer.hidden = !body.feedback;
    const summary = box.querySelector(".summary");
    summary.textContent = body.summary || "";
    summary.hidden = !body.summary;
    next.dataset.href = body.next_url;
    // The answer is given: its questions stay as they were, for reading beside the feedback,
    // and take no more changes (a resend is answered with the same feedback).
    document.querySelectorAll("#annotate-form article.output").forEach((article) => {
      article.inert = true;
    });
    document.getElementById("submit").hidden = true;
    document.getElementById("annotate-form").classList.add("answered-tutorial");
    box.hidden = false;
    box.scrollIntoView({ block: "nearest" });
    next.focus();
  }

  next.addEventListener("click", () => window.location.assign(next.dataset.href));
  window.EvalSiteFeedback = { show };
})();
