// The annotation page: keyboard-first scoring and a submit that is never silently lost.
// Data comes from the json_script block "annotate-data"; the texts on the page are server-rendered,
// and each translation's text as stored is in data.texts too (page.text): the HTML parser turns
// CR LF and CR in the markup into LF, so offsets are never counted on the page's text nodes.
// A page shows one item, or the items of a document screen (one per segment): a document
// screen is sent in one request (data.screenUrl), stored whole or not at all, where the
// server's rules for a submit hold for every segment.
// The questions are the protocol kind's: its screen script (loaded before this one) registers
// the widgets they use in window.EvalSiteWidgets (see annotation/screens/scales.js).
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("annotate-data").textContent);
  const form = document.getElementById("annotate-form");
  const errorBox = document.getElementById("annotate-error");
  const submitButton = document.getElementById("submit");
  const groups = Array.from(form.querySelectorAll("fieldset.criterion"));
  // Each item's id, the revision its answer is based on, its outputs, the id of its next
  // submit and whether its answer changed on this page.
  let items = [];
  let itemOf = {};
  // A document screen's document-level score (data.documentScore), sent as a submit of its
  // own: the question with data-output="document".
  let documentScore = null;
  function setItems(list, scored) {
    items = list.map((item) => ({ ...item, submissionId: newId(), dirty: false }));
    itemOf = {};
    items.forEach((item) => item.outputs.forEach((o) => (itemOf[String(o)] = item)));
    documentScore = scored ? { ...scored, submissionId: newId(), dirty: false } : null;
    if (documentScore) itemOf.document = documentScore;
  }
  setItems(data.items, data.documentScore);
  let sending = false;
  // An answer given on this item and not stored yet: leaving the page asks first.
  let unsent = false;
  // " · EvalSite" after the item's title.
  const titleSuffix = document.title.slice(document.title.lastIndexOf(" · "));

  // A client-generated id per answer: a resent submit is stored once. randomUUID needs a
  // secure context, so fall back to getRandomValues (available everywhere).
  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  function widget(group) {
    return window.EvalSiteWidgets[group.dataset.widget];
  }

  function visible(group) {
    // Fluency first: only the questions that need no source until it is shown.
    return !(document.body.classList.contains("phase-fluency") && !("sourceFree" in group.dataset));
  }

  function value(group) {
    return widget(group).value(group);
  }

  function setValue(group, v) {
    if (!widget(group).set(group, v)) return false;
    group.classList.add("answered");
    changed(group);
    return true;
  }

  function changed(group) {
    // A changed answer is a new submit, not a resend of the last one.
    const item = itemOf[group.dataset.output];
    item.submissionId = newId();
    item.dirty = true;
    unsent = true;
    errorBox.hidden = true;
    showScreenProgress();
    collapseSource();
  }

  function focusGroup(group) {
    if (!group) return;
    groups.forEach((g) => g.classList.remove("focused"));
    group.classList.add("focused");
    group.focus({ preventScroll: false });
    group.scrollIntoView({ block: "nearest" });
  }

  // The question that has the keyboard focus (the fieldset or a control inside it); none when the
  // focus is elsewhere, so digits never change a question the annotator has moved away from.
  function current() {
    const active = document.activeElement;
    const group = active && active.closest ? active.closest("fieldset.criterion") : null;
    return group && groups.includes(group) ? group : null;
  }

  // Enter on these does what it does anywhere else (follow a link, press a button, open the
  // instructions, choose in a select); only on a question or the page itself does it submit.
  function ownsEnter(target) {
    if (!target || !target.closest) return false;
    if (target.closest("a[href], button, select, summary, textarea, [contenteditable=true]")) {
      return true;
    }
    if (target.closest("fieldset.criterion")) return false;
    return Boolean(target.closest("input"));
  }

  function visibleGroups() {
    return groups.filter(visible);
  }

  // Order: output by output, criterion by criterion (the DOM order).
  function step(group, delta) {
    const list = visibleGroups();
    const i = list.indexOf(group);
    return list[Math.min(list.length - 1, Math.max(0, i + delta))];
  }

  function sameCriterionOtherOutput(group, delta) {
    const list = visibleGroups().filter((g) => g.dataset.criterion === group.dataset.criterion);
    const i = list.indexOf(group);
    return list[Math.min(list.length - 1, Math.max(0, i + delta))];
  }

  // Where a new item starts: a question that leads its screen (a span editor: errors are marked
  // before the score), else the first one without an answer.
  function firstQuestion() {
    const list = visibleGroups();
    return list.find((g) => widget(g).leads || value(g) === null) || groups[0];
  }

  function nextUnanswered(after) {
    const list = visibleGroups();
    const start = list.indexOf(after);
    for (let k = 1; k <= list.length; k++) {
      const g = list[(start + k) % list.length];
      if (value(g) === null) return g;
    }
    return null;
  }

  // Every question on the page, output by output: the criteria's scores and whatever else the
  // kind's screen asks (its error spans).
  function collect() {
    const answer = {};
    let missing = null;
    data.outputs.forEach((outputId) => {
      answer[outputId] = {};
    });
    if (documentScore) answer.document = {};
    groups.forEach((group) => {
      const v = value(group);
      if (v === null) missing = missing || group;
      else answer[group.dataset.output][group.dataset.criterion] = v;
    });
    return { answer, missing };
  }

  // The segments (of a document screen) or translations with a question left unanswered,
  // and the document score when it is; in page order.
  function unanswered() {
    const open = new Set();
    groups.forEach((group) => {
      if (value(group) === null) open.add(itemOf[group.dataset.output]);
    });
    return items.concat(documentScore ? [documentScore] : []).filter((i) => open.has(i));
  }

  // On a document screen: how many of its segments have every question answered.
  function showScreenProgress() {
    const line = document.getElementById("screen-progress");
    if (!line) return;
    const open = unanswered().filter((i) => i !== documentScore).length;
    line.textContent = data.messages.screenProgress
      .replace("%(n)s", items.length - open)
      .replace("%(total)s", items.length);
  }

  // A submit with questions left: how many segments (or translations), and a button to the
  // first of them; on a long document screen the page stays where the annotator is.
  function showIncomplete(missing) {
    showError(data.messages.incomplete);
    const open = unanswered().length;
    const forms = data.documents ? data.messages.stillToAnswer : data.messages.stillToAnswerOutputs;
    const line = document.createElement("p");
    line.className = "still-to-answer";
    line.textContent = `${(open === 1 ? forms[0] : forms[1]).replace("%(n)s", open)} — `;
    const go = document.createElement("button");
    go.type = "button";
    go.className = "link-button";
    go.id = "first-unanswered";
    go.textContent = data.messages.goToFirst;
    go.addEventListener("click", () => focusGroup(missing));
    line.appendChild(go);
    errorBox.appendChild(line);
    if (data.documents) go.focus({ preventScroll: true });
    else focusGroup(missing);
  }

  // The CSRF token as the cookie has it now: logging in again (in another tab) replaces it, and
  // the copy in the page's form is then refused. The form's copy when the cookie is not readable.
  function csrfToken() {
    const name = `${data.csrfCookie}=`;
    const cookie = data.csrfCookie
      ? document.cookie.split(";").map((c) => c.trim()).find((c) => c.startsWith(name))
      : null;
    if (cookie) return decodeURIComponent(cookie.slice(name.length));
    return form.querySelector("input[name=csrfmiddlewaretoken]").value;
  }

  // ``link``: [address, text] of a page to open in a new tab, so that the answer here stays.
  function showError(message, details, link, hint) {
    errorBox.textContent = "";
    const p = document.createElement("p");
    p.textContent = message;
    errorBox.appendChild(p);
    if (link) {
      const a = document.createElement("a");
      a.href = link[0];
      a.target = "_blank";
      a.rel = "noopener";
      a.textContent = link[1];
      // Back on this page, Enter should send the answer, not open that page again.
      a.addEventListener("click", () => submitButton.focus());
      const line = document.createElement("p");
      line.appendChild(a);
      errorBox.appendChild(line);
    }
    if (hint) {
      const line = document.createElement("p");
      line.textContent = hint;
      errorBox.appendChild(line);
    }
    if (details && details.length > 1) {
      const ul = document.createElement("ul");
      details.forEach((d) => {
        const li = document.createElement("li");
        li.textContent = d;
        ul.appendChild(li);
      });
      errorBox.appendChild(ul);
    }
    errorBox.hidden = false;
    errorBox.scrollIntoView({ block: "nearest" });
  }

  function finishFluencyPhase() {
    const missing = groups.find((g) => "sourceFree" in g.dataset && value(g) === null);
    if (missing) {
      showError(data.messages.incomplete);
      focusGroup(missing);
      return;
    }
    document.body.classList.remove("phase-fluency");
    focusGroup(firstQuestion());
  }

  async function submit() {
    if (sending) return;
    if (document.body.classList.contains("phase-fluency")) {
      finishFluencyPhase();
      return;
    }
    const { answer, missing } = collect();
    if (missing) {
      showIncomplete(missing);
      return;
    }
    // One item is always sent (a revision unchanged is a revision too, as it always was); of
    // a document screen the items not answered yet and the ones changed on this page, after
    // its document score when that is new or changed (the server takes a screen's last
    // segment only once the screen is scored).
    const pending = items.length === 1 ? items : items.filter((i) => !i.revision || i.dirty);
    if (documentScore && (!documentScore.revision || documentScore.dirty)) {
      pending.unshift(documentScore);
    }
    if (!pending.length) {
      window.location.assign(data.currentUrl);
      return;
    }
    sending = true;
    submitButton.disabled = true;
    submitButton.classList.add("busy");
    try {
      const body = data.documents ? await sendScreen(pending, answer) : await sendEach(pending, answer);
      if (!body) return;
      unsent = false;
      // A tutorial answer comes back with its feedback, shown before moving on
      // (annotation/tutorial.js).
      if (body.feedback !== undefined && window.EvalSiteFeedback) {
        window.EvalSiteFeedback.show(body);
        return;
      }
      // The next item came with the answer: shown in place, one request per item. A page
      // load only where this page cannot show it (the task is done, the hold has ended, the
      // item asks for other questions, or the page shows a document).
      if (!data.documents && body.next && fits(body.next)) showItem(body.next);
      else window.location.assign(body.next_url || data.currentUrl);
    } catch (e) {
      // Nothing is lost: the answer stays on the page and a retry resends the same submit.
      showError(data.messages.network);
    } finally {
      sending = false;
      submitButton.disabled = false;
      submitButton.classList.remove("busy");
    }
  }

  // A screen's items one by one (one item, in practice): the last answer's body, or null
  // when one was refused (the page says why).
  async function sendEach(pending, answer) {
    let body = {};
    for (const item of pending) {
      const scored = item === documentScore;
      const response = scored ? await sendScore(answer.document.document) : await send(item, answer);
      body = await response.json().catch(() => ({}));
      // A 2xx that is not the submit's answer (a proxy's page) is treated as a failure.
      if (!(response.ok && (scored ? body.document_judgment : body.next_url))) {
        refused(response, body);
        return null;
      }
      // Stored: a retry after a later item failed does not send it again, and a change
      // made since is a revision of this one.
      item.revision = body.revision;
      item.dirty = false;
      if (!scored) {
        data.progressMost = body.most === undefined ? null : body.most;
        showProgress(body.done, body.total);
      }
    }
    return body;
  }

  // A document screen in one request: its new and changed segments and document score,
  // stored together or not at all. The body, or null when refused.
  async function sendScreen(pending, answer) {
    const scored = pending.includes(documentScore);
    const response = await post(data.screenUrl, {
      screen: data.items[0].id,
      items: pending.filter((i) => i !== documentScore).map((item) => itemBody(item, answer)),
      document_score: scored
        ? {
            revision: documentScore.revision,
            submission_id: documentScore.submissionId,
            score: answer.document.document,
          }
        : null,
    });
    const body = await response.json().catch(() => ({}));
    if (!(response.ok && body.next_url && Array.isArray(body.items))) {
      refused(response, body);
      // A wrong answer: to the segment the server names (the message says which).
      const item = response.status === 400 && items.find((i) => i.id === body.item);
      if (item) focusGroup(groups.find((g) => item.outputs.includes(Number(g.dataset.output))));
      return null;
    }
    const stored = {};
    body.items.forEach((r) => (stored[r.item] = r.revision));
    items.forEach((item) => {
      if (stored[item.id] === undefined) return;
      item.revision = stored[item.id];
      item.dirty = false;
    });
    if (scored && body.document_score) {
      documentScore.revision = body.document_score.revision;
      documentScore.dirty = false;
    }
    showProgress(body.done, body.total);
    return body;
  }

  function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "Content-Type": "application/json",
        "X-CSRFToken": csrfToken(),
      },
      body: JSON.stringify(body),
    });
  }

  // An item's answer: the page's answers to its outputs.
  function itemBody(item, answer) {
    const part = {};
    item.outputs.forEach((o) => (part[o] = answer[o]));
    return {
      item: item.id,
      revision: item.revision,
      submission_id: item.submissionId,
      answer: part,
    };
  }

  function send(item, answer) {
    return post(data.submitUrl, itemBody(item, answer));
  }

  function sendScore(score) {
    return post(documentScore.url, {
      item: documentScore.item,
      revision: documentScore.revision,
      submission_id: documentScore.submissionId,
      score: score,
    });
  }

  // A submit the server did not store: say why, and what to do.
  function refused(response, body) {
    if (response.status === 401 || response.status === 403) {
      // Logged out (the session ended, or "Log out" in another tab): logging in again in
      // another tab and pressing Enter here sends this answer (csrfToken reads the new token).
      showError(data.messages.loggedOut, null, [data.loginUrl, data.messages.logIn]);
    } else if (response.status === 409 && body.code === "not_active") {
      // Resuming the task (in another tab) takes its place back if it is still free; then
      // this answer can be sent as it is.
      showError(data.messages.holdEnded, null, [data.doneUrl, data.messages.myTasks]);
    } else if (response.status >= 500 || !body.detail) {
      // The server failed (or a proxy answered for it): Enter resends the same submit, which
      // is stored once even if this one did arrive.
      showError(body.detail || data.messages.failed, null, null, data.messages.retry);
    } else {
      showError(body.detail, body.errors);
    }
  }

  // The task's progress: "n of total done", or in a pull mode while more items may follow
  // (data.progressMost: the most the task may grow to) "n answered · more may follow".
  function showProgress(done, total) {
    const progress = document.getElementById("progress");
    const most = data.progressMost;
    progress.max = most || total;
    progress.value = done;
    document.getElementById("progress-text").textContent = (
      most ? data.messages.progressOpen.replace("%(most)s", most) : data.messages.progress
    )
      .replace("%(done)s", done)
      .replace("%(total)s", total);
  }

  // Whether an item (as GET …/current/ answers it) can replace the one on the page: the same
  // questions for as many translations, and a place on the page for the source and the
  // reference exactly where the item has them.
  function fits(item) {
    return (
      item.outputs.length === data.outputs.length &&
      JSON.stringify(item.criteria) === JSON.stringify(data.criteria) &&
      (item.source !== null) === Boolean(document.querySelector(".current.source")) &&
      (item.reference !== null) === Boolean(document.querySelector(".current.reference")) &&
      item.fluency_first === data.fluencyFirst
    );
  }

  function contextLine(text) {
    const p = document.createElement("p");
    p.className = "ctx";
    p.dir = "auto";
    p.textContent = text;
    return p;
  }

  // The page as the server renders the current item: texts, answers cleared, first question.
  function showItem(item) {
    data.outputs = item.outputs.map((o) => o.id);
    data.texts = {};
    item.outputs.forEach((o) => (data.texts[String(o.id)] = o.text));
    setItems([{ id: item.item, revision: item.revision, outputs: data.outputs }], null);
    data.answer = null;

    const context = document.querySelector("section.context");
    context.querySelectorAll(".ctx").forEach((p) => p.remove());
    const first = context.querySelector(".current");
    item.context_before.forEach((text) => context.insertBefore(contextLine(text), first));
    item.context_after.forEach((text) => context.insertBefore(contextLine(text), sourceToggle));
    if (item.source !== null) context.querySelector(".current.source .seg").textContent = item.source;
    if (item.reference !== null) {
      context.querySelector(".current.reference .seg").textContent = item.reference;
    }

    form.querySelectorAll("article.output").forEach((article, i) => {
      const id = String(item.outputs[i].id);
      article.dataset.output = id;
      article.querySelector("p.text").textContent = item.outputs[i].text;
      article.querySelectorAll("fieldset.criterion").forEach((group) => {
        group.dataset.output = id;
        group.classList.remove("answered");
        widget(group).reset(group);
      });
    });

    document.title = data.messages.title
      .replace("%(n)s", item.position)
      .replace("%(total)s", item.total) + titleSuffix;
    showProgress(item.done, item.total);
    const previous = document.getElementById("previous");
    previous.href = `${data.itemUrl}${item.position - 1}/`;
    previous.hidden = item.position < 2;
    ["back-to-current", "next-answered"].forEach((id) => {
      const link = document.getElementById(id);
      if (link) link.remove();
    });
    document.querySelectorAll(".revising-note").forEach((note) => note.remove());
    document.querySelector("details.instructions").open = false;
    if (data.fluencyFirst) document.body.classList.add("phase-fluency");
    if (window.location.pathname !== data.currentUrl) {
      window.history.replaceState(null, "", data.currentUrl);
      // The footer's language switch comes back here, not to the item the page was loaded at.
      const back = document.querySelector(".lang-form input[name=next]");
      if (back) back.value = data.currentUrl;
    }

    unsent = false;
    errorBox.hidden = true;
    // The new item's source is read whole first.
    sourceOpened = false;
    setSourceCollapsed(false);
    if (pinned) pinned.classList.remove("shrunk");
    window.scrollTo(0, 0);
    focusGroup(firstQuestion());
  }

  // The head (progress) is pinned at the top, and on a phone the source under it
  // (evalsite.css): the source starts where the head, whose height depends on wrapping, ends.
  const head = document.querySelector(".annot-head");
  function pinUnderHead() {
    if (head) document.documentElement.style.setProperty("--annot-head-height", `${head.offsetHeight}px`);
  }
  window.addEventListener("resize", pinUnderHead);
  pinUnderHead();

  // On a phone the source pinned under the head (or the document before a window) takes a
  // third of the screen: once the annotator scores, it shrinks to its first lines, with a
  // button to show it whole again (which then stays so for this item).
  const narrow = window.matchMedia("(max-width: 600px)");
  // (The text after a window is inside the form, below its segments: it stays as it is.)
  const pinned =
    document.querySelector("section.context") ||
    document.querySelector(".doc-title ~ section.doc-context");
  let sourceToggle = null;
  let sourceOpened = false;
  function setSourceCollapsed(collapsed) {
    if (!sourceToggle) return;
    pinned.classList.toggle("collapsed", collapsed);
    sourceToggle.setAttribute("aria-expanded", String(!collapsed));
    sourceToggle.textContent = collapsed ? data.messages.showSource : data.messages.hideSource;
    pinUnderHead();
  }
  function collapseSource() {
    if (sourceOpened || !narrow.matches || !pinned) return;
    pinned.classList.add("shrunk");
    setSourceCollapsed(true);
  }
  if (pinned && data.messages.showSource) {
    sourceToggle = document.createElement("button");
    sourceToggle.type = "button";
    sourceToggle.className = "source-toggle";
    sourceToggle.addEventListener("click", () => {
      const collapsed = !pinned.classList.contains("collapsed");
      sourceOpened = !collapsed;
      setSourceCollapsed(collapsed);
    });
    pinned.appendChild(sourceToggle);
    setSourceCollapsed(false);
  }

  // What a widget may do to the page (see annotation/screens/scales.js).
  const page = {
    setValue,
    advance: (group) => focusGroup(nextUnanswered(group) || group),
    // The question's translation exactly as the server stores it (its offsets count on it).
    text: (group) => data.texts[group.dataset.output],
  };

  function onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const group = current();
    const key = event.key;
    if (key === "Enter") {
      if (ownsEnter(event.target)) return;
      event.preventDefault();
      submit();
      return;
    }
    if (!group) return;
    // A list inside a question (a span's category) keeps its own keys.
    if (event.target.closest && event.target.closest("select")) return;
    // The question's own keys first (digits, a slider's arrows), then moving between questions.
    if (widget(group).key(group, event, page)) {
      event.preventDefault();
      return;
    }
    const moves = {
      ArrowRight: () => step(group, 1),
      ArrowLeft: () => step(group, -1),
      ArrowDown: () => sameCriterionOtherOutput(group, 1),
      ArrowUp: () => sameCriterionOtherOutput(group, -1),
    };
    if (moves[key]) {
      event.preventDefault();
      focusGroup(moves[key]());
    }
  }

  groups.forEach((group) => {
    group.addEventListener("focus", () => focusGroup(group));
    group.addEventListener("click", () => focusGroup(group));
    group.addEventListener("change", () => {
      group.classList.add("answered");
      changed(group);
    });
    widget(group).init(group, page);
  });
  // The highlight follows the focus: it goes when the focus leaves the questions.
  document.addEventListener("focusin", (event) => {
    const group = event.target.closest ? event.target.closest("fieldset.criterion") : null;
    groups.forEach((g) => g.classList.toggle("focused", g === group));
  });
  document.addEventListener("focusout", (event) => {
    const next = event.relatedTarget;
    if (!next || !next.closest || !next.closest("fieldset.criterion")) {
      groups.forEach((g) => g.classList.remove("focused"));
    }
  });
  document.addEventListener("keydown", onKey);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  // A reload, a link, Back or closing the tab would lose an answer not sent yet (or refused):
  // the browser asks first (in its own words; a page cannot set the text).
  window.addEventListener("beforeunload", (event) => {
    if (!unsent) return;
    event.preventDefault();
    event.returnValue = "";
  });


  // An earlier answer (revising) is filled in.
  if (data.answer) {
    groups.forEach((group) => {
      const v = (data.answer[group.dataset.output] || {})[group.dataset.criterion];
      if (v !== undefined && v !== null) setValue(group, v);
    });
    // Filled in, not changed: nothing to send again, and a change is a new submit.
    setItems(data.items, data.documentScore);
    unsent = false;
    errorBox.hidden = true;
    document.body.classList.remove("phase-fluency");
    // Opened to revise: the source is shown whole, as the annotator had not scored yet.
    setSourceCollapsed(false);
    if (pinned) pinned.classList.remove("shrunk");
  }
  showScreenProgress();
  focusGroup(firstQuestion());
})();
