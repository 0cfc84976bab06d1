// The span editor of the error-span screens (templates/annotation/screens/spans.html), a widget
// as annotate.js expects them (see annotation/screens/scales.js for the contract). Its answer is
// the list of marked spans, {start, end, severity[, category]}, offsets in Unicode code points of
// the shown text; [length, length + 1) is the "missing" marker after the text.
//
// The text is split into tokens: words (runs of non-space characters) for space-delimited
// scripts, single characters for Chinese, Japanese and Thai, so spans snap to them. Mouse: press
// on the first token and release on the last, or click the first and then the last; touch: tap
// them. Keys: ← → move over the tokens, Space marks the start and then the end, a digit gives
// the selected span its severity, c its category, Delete removes it, Esc cancels.
(function () {
  "use strict";

  const widgets = (window.EvalSiteWidgets = window.EvalSiteWidgets || {});
  const config = JSON.parse(document.getElementById("span-data").textContent);
  const messages = document.getElementById("span-messages").dataset;
  // Scripts written without spaces between words: a span may start and end at any character.
  const CHARACTER_SCRIPTS = /^(zh|ja|th|lo|km|my|yue|wuu|bo)\b/i;
  const states = new WeakMap();

  function textOf(group) {
    return group.querySelector("p.text");
  }

  // Tokens of a text: [{start, end}] in code points, and the text's code points.
  function tokenise(text, lang) {
    const chars = Array.from(text);
    const tokens = [];
    const perCharacter = CHARACTER_SCRIPTS.test(lang || "");
    let start = null;
    chars.forEach((ch, i) => {
      const space = /\s/u.test(ch);
      if (perCharacter) {
        if (!space) tokens.push({ start: i, end: i + 1 });
        return;
      }
      if (space && start !== null) {
        tokens.push({ start, end: i });
        start = null;
      } else if (!space && start === null) start = i;
    });
    if (start !== null) tokens.push({ start, end: chars.length });
    return { chars, tokens };
  }

  // The state of one editor; the text is split again when a new item is shown in place. The
  // text is the stored string from the page's data, not the markup's (CR LF arrives there as LF),
  // and the tokens replace the markup's text.
  function build(group) {
    const p = textOf(group);
    const text = page.text(group);
    const { chars, tokens } = tokenise(text, p.lang);
    p.textContent = "";
    let at = 0;
    tokens.forEach((token, i) => {
      if (token.start > at) p.appendChild(document.createTextNode(chars.slice(at, token.start).join("")));
      const span = document.createElement("span");
      span.className = "tok";
      span.dataset.i = String(i);
      span.textContent = chars.slice(token.start, token.end).join("");
      p.appendChild(span);
      at = token.end;
    });
    if (at < chars.length) p.appendChild(document.createTextNode(chars.slice(at).join("")));
    const missing = group.querySelector(".span-missing");
    missing.dataset.i = String(tokens.length);
    tokens.push({ start: chars.length, end: chars.length + 1, missing: true });
    const state = { chars, tokens, spans: [], cursor: 0, anchor: null, active: null, down: null };
    states.set(group, state);
    return state;
  }

  function state(group) {
    return states.get(group) || build(group);
  }

  function tokenElements(group) {
    return Array.from(group.querySelectorAll(".tok"));
  }

  function spanAt(st, index) {
    const token = st.tokens[index];
    return st.spans.findIndex((s) => s.start < token.end && token.start < s.end);
  }

  function excerpt(st, span) {
    if (span.start >= st.chars.length) return `[${messages.missing}]`;
    const text = st.chars.slice(span.start, span.end).join("");
    return text.length > 40 ? `${text.slice(0, 37)}…` : text;
  }

  function note(group, text) {
    group.querySelector(".span-note").textContent = text || "";
  }

  function option(value, label, selected) {
    const o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    o.selected = selected;
    return o;
  }

  // The tokens' marks and the list of spans, from the state.
  function render(group) {
    renderTokens(group);
    const st = state(group);
    const list = group.querySelector(".span-list");
    list.textContent = "";
    st.spans.forEach((span, k) => list.appendChild(chip(group, st, span, k)));
    group.querySelector(".span-count").textContent = st.spans.length ? `(${st.spans.length})` : "";
  }

  // The tokens alone (the list's controls stay: one may be under the pointer).
  function renderTokens(group) {
    const st = state(group);
    tokenElements(group).forEach((el) => {
      const i = Number(el.dataset.i);
      const k = spanAt(st, i);
      el.className = el.classList.contains("span-missing") ? "tok span-missing" : "tok";
      if (k >= 0) el.classList.add("marked", `sev-${st.spans[k].severity}`);
      if (k >= 0 && k === st.active) el.classList.add("active");
      if (i === st.anchor) el.classList.add("anchor");
      if (i === st.cursor && group.contains(document.activeElement)) el.classList.add("cursor");
    });
  }

  function chip(group, st, span, k) {
    const li = document.createElement("li");
    li.className = `span-chip sev-${span.severity}${k === st.active ? " active" : ""}`;
    if (config.categories.length && !span.category) li.classList.add("needs-category");
    const pick = document.createElement("button");
    pick.type = "button";
    pick.className = "span-pick";
    pick.tabIndex = -1;
    pick.textContent = excerpt(st, span);
    pick.addEventListener("click", () => select(group, k));
    const severity = document.createElement("select");
    severity.className = "span-severity";
    severity.tabIndex = -1;
    config.severities.forEach((s) => severity.appendChild(option(s.key, `${s.shortcut} ${s.label}`, s.key === span.severity)));
    severity.addEventListener("change", () => update(group, k, { severity: severity.value }, "span-severity"));
    li.append(pick, severity);
    if (config.categories.length) {
      const category = document.createElement("select");
      category.className = "span-category";
      category.tabIndex = -1;
      category.appendChild(option("", messages.category, !span.category));
      config.categories.forEach((c) => category.appendChild(option(c.key, c.label, c.key === span.category)));
      category.addEventListener("change", () => update(group, k, { category: category.value }, "span-category"));
      // Back to the text once chosen (Enter or Esc), for the next span.
      category.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === "Escape") {
          event.preventDefault();
          event.stopPropagation();
          group.focus();
        }
      });
      li.appendChild(category);
    }
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "span-remove";
    remove.tabIndex = -1;
    remove.textContent = "×";
    remove.setAttribute("aria-label", messages.remove);
    remove.addEventListener("click", () => removeSpan(group, k));
    li.appendChild(remove);
    return li;
  }

  let page = null;

  // Every change goes through the page (it marks the answer as changed and unsent).
  function commit(group, spans, active, message) {
    const st = state(group);
    st.active = active;
    page.setValue(group, spans);
    note(group, message);
  }

  // A chip's list changed: the chips are drawn again, so a list the annotator is choosing in
  // with the keyboard keeps the focus (else it falls to the page, and the Enter that closes
  // the list would send the answer).
  function update(group, k, change, list) {
    const st = state(group);
    const focused = document.activeElement && document.activeElement.classList.contains(list);
    const spans = st.spans.map((s, i) => (i === k ? Object.assign({}, s, change) : s));
    commit(group, spans, k, "");
    const again = group.querySelectorAll(".span-chip")[k];
    if (focused && again && again.querySelector(`.${list}`)) again.querySelector(`.${list}`).focus();
  }

  function select(group, k) {
    const st = state(group);
    st.active = k;
    st.anchor = null;
    render(group);
  }

  function removeSpan(group, k) {
    const st = state(group);
    if (k === null || k < 0 || k >= st.spans.length) return;
    commit(group, st.spans.filter((_s, i) => i !== k), null, messages.removed);
  }

  // A new span over tokens a..b (either order), unless it overlaps one or there are too many.
  function create(group, a, b) {
    const st = state(group);
    const lo = Math.min(a, b);
    let hi = Math.max(a, b);
    st.anchor = null;
    // The marker is a span of its own: a selection from the text up to it ends at the text.
    if (st.tokens[hi].missing && hi !== lo) hi -= 1;
    const span = { start: st.tokens[lo].start, end: st.tokens[hi].end, severity: config.severities[0].key };
    if (config.categories.length) span.category = "";
    if (st.spans.some((s) => s.start < span.end && span.start < s.end)) {
      render(group);
      note(group, messages.overlap);
      return;
    }
    if (config.maxSpans && st.spans.length >= config.maxSpans) {
      render(group);
      note(group, messages.tooMany);
      return;
    }
    const spans = st.spans.concat([span]).sort((x, y) => x.start - y.start);
    commit(group, spans, spans.indexOf(span), messages.created);
  }

  // A click or tap on token i: select the span there, or mark a start, or end the span.
  function tap(group, i) {
    const st = state(group);
    const k = spanAt(st, i);
    st.cursor = i;
    if (st.anchor === null && k >= 0) {
      select(group, k);
      return;
    }
    if (st.anchor === null) {
      st.anchor = i;
      st.active = null;
      render(group);
      note(group, messages.start);
      return;
    }
    create(group, st.anchor, i);
  }

  function tokenIndex(element) {
    const tok = element && element.closest ? element.closest(".tok") : null;
    return tok ? Number(tok.dataset.i) : null;
  }

  widgets.spans = {
    // Spans come first on a screen: the editor has the focus when an item is shown.
    leads: true,
    value(group) {
      const st = state(group);
      // A span without its category is not an answer yet.
      if (config.categories.length && st.spans.some((s) => !s.category)) return null;
      return st.spans.map((s) => Object.assign({}, s));
    },
    set(group, v) {
      if (!Array.isArray(v)) return false;
      const st = state(group);
      st.spans = v.map((s) => Object.assign({}, s)).sort((x, y) => x.start - y.start);
      if (st.active !== null && st.active >= st.spans.length) st.active = null;
      render(group);
      return true;
    },
    reset(group) {
      states.delete(group);
      build(group);
      note(group, "");
      render(group);
    },
    key(group, event) {
      const st = state(group);
      if (event.target.closest && event.target.closest("select")) return false;
      const rtl = getComputedStyle(textOf(group)).direction === "rtl";
      const forward = rtl ? "ArrowLeft" : "ArrowRight";
      const back = rtl ? "ArrowRight" : "ArrowLeft";
      const last = st.tokens.length - 1;
      const key = event.key;
      const severity = config.severities.find((s) => s.shortcut === key);
      if (key === forward || key === back || key === "Home" || key === "End") {
        if (key === forward) st.cursor = Math.min(last, st.cursor + 1);
        else if (key === back) st.cursor = Math.max(0, st.cursor - 1);
        else st.cursor = key === "Home" ? 0 : last;
        render(group);
        const el = group.querySelector(`.tok[data-i="${st.cursor}"]`);
        if (el) el.scrollIntoView({ block: "nearest" });
        return true;
      }
      if (key === " ") {
        tap(group, st.cursor);
        return true;
      }
      if (severity && st.active !== null) {
        update(group, st.active, { severity: severity.key });
        return true;
      }
      if ((key === "Delete" || key === "Backspace") && st.active !== null) {
        removeSpan(group, st.active);
        return true;
      }
      if (key === "Escape") {
        st.anchor = null;
        st.active = null;
        render(group);
        note(group, "");
        return true;
      }
      if (key === "c" && config.categories.length && st.active !== null) {
        const select = group.querySelectorAll(".span-chip")[st.active].querySelector(".span-category");
        select.focus();
        return true;
      }
      return false;
    },
    init(group, pageApi) {
      page = pageApi;
      build(group);
      render(group);
      // Press on a token and release on another: a span over both and all between. A press and
      // release on one token is a tap. Touch taps only (a drag scrolls the page).
      group.addEventListener("pointerdown", (event) => {
        const i = tokenIndex(event.target);
        state(group).down = i;
        if (i !== null) event.preventDefault();
      });
      group.addEventListener("pointerup", (event) => {
        const st = state(group);
        const from = st.down;
        st.down = null;
        if (from === null) return;
        const to = tokenIndex(document.elementFromPoint(event.clientX, event.clientY));
        group.focus({ preventScroll: true });
        if (to === null) return;
        if (to !== from && event.pointerType !== "touch") {
          st.cursor = to;
          create(group, from, to);
        } else tap(group, to);
      });
      group.addEventListener("focus", () => renderTokens(group));
      group.addEventListener("blur", () => renderTokens(group));
    },
  };
})();
