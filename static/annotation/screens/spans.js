// The span editor of the error-span screens (templates/annotation/screens/spans.html), a widget
// as annotate.js expects them (see annotation/screens/scales.js for the contract). Its answer is
// the list of marked spans, {start, end, severity[, category]}, offsets in Unicode code points of
// the shown text; [length, length + 1) is the "missing" marker after the text.
//
// The text is split into tokens: words (runs of letters, digits, symbols and the punctuation
// inside a word, as in "don't" or "3.5") with each other punctuation mark a token of its own, for
// space-delimited scripts; single characters for Chinese, Japanese and Thai. Spans snap to them,
// and can be set to any characters (a user-perceived character, a grapheme, is the unit: an
// accent stays with its letter). Mouse: press on the first token and release on the last, or
// click the first and then the last; a drag inside one word marks exactly the characters dragged
// over; touch: tap them. Keys: ← → move over the tokens, Space marks the start and then the end,
// Shift+← → move the selected span's end (Space on it: its start) by one character, a digit
// gives it its severity, c its category, Delete removes it, Esc cancels; a click on the marker
// after the text, or m, marks missing content.
(function () {
  "use strict";

  const widgets = (window.EvalSiteWidgets = window.EvalSiteWidgets || {});
  const config = JSON.parse(document.getElementById("span-data").textContent);
  const messages = document.getElementById("span-messages").dataset;
  // Scripts written without spaces between words: a span may start and end at any character.
  const CHARACTER_SCRIPTS = /^(zh|ja|th|lo|km|my|yue|wuu|bo)\b/i;
  // What joins the character before it: combining marks, zero-width joiner, variation selectors.
  const JOINS = /[\p{M}\u200d\ufe0e\ufe0f]/u;
  const graphemes =
    typeof Intl !== "undefined" && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;
  const states = new WeakMap();
  // Each editor's missing-content marker: the page may replace the text it is placed in.
  const markers = new WeakMap();

  function textOf(group) {
    return group.querySelector("p.text");
  }

  function kind(ch) {
    if (/\s/u.test(ch)) return "space";
    return /\p{P}/u.test(ch) ? "punct" : "word";
  }

  // Tokens of a text: [{start, end}] in code points, and the text's code points.
  function tokenise(text, lang) {
    const chars = Array.from(text);
    const tokens = [];
    if (CHARACTER_SCRIPTS.test(lang || "")) {
      chars.forEach((ch, i) => {
        if (!/\s/u.test(ch)) tokens.push({ start: i, end: i + 1 });
      });
      return { chars, tokens };
    }
    const kinds = chars.map(kind);
    let current = null;
    const close = () => {
      if (current) tokens.push({ start: current.start, end: current.end });
      current = null;
    };
    chars.forEach((ch, i) => {
      let k = kinds[i];
      // Punctuation between two letters or digits belongs to the word ("don't", "e-mail", "3.5").
      if (k === "punct" && kinds[i - 1] === "word" && kinds[i + 1] === "word") k = "word";
      if (k === "space") close();
      else if (current && JOINS.test(ch)) current.end = i + 1;
      else if (k === "punct") {
        close();
        current = { start: i, end: i + 1, punct: true };
      } else {
        if (current && current.punct) close();
        if (current) current.end = i + 1;
        else current = { start: i, end: i + 1 };
      }
    });
    close();
    return { chars, tokens };
  }

  // Where a character may start or end (in code points): the text's grapheme boundaries.
  function boundaries(text, length) {
    if (!graphemes) return Array.from({ length: length + 1 }, (_x, i) => i);
    const out = [];
    let at = 0;
    for (const { segment } of graphemes.segment(text)) {
      out.push(at);
      at += Array.from(segment).length;
    }
    out.push(at);
    return out;
  }

  // The state of one editor; the text is split again when a new item is shown in place. The
  // text is the stored string from the page's data, not the markup's (CR LF arrives there as LF),
  // and the tokens replace the markup's text. The marker goes at the end of the text, so that it
  // follows the last word in reading order (at the left end of a right-to-left text).
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
    const missing = markers.get(group) || group.querySelector(".span-missing");
    markers.set(group, missing);
    missing.dataset.i = String(tokens.length);
    p.appendChild(missing);
    tokens.push({ start: chars.length, end: chars.length + 1, missing: true });
    const bounds = boundaries(text, chars.length);
    const state = { chars, tokens, bounds, spans: [], cursor: 0, anchor: null, active: null, down: null, edge: "end" };
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
    const chars = st.chars.slice(span.start, span.end);
    return chars.length > 40 ? `${chars.slice(0, 37).join("")}…` : chars.join("");
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

  // The tokens alone (the list's controls stay: one may be under the pointer). A token that a
  // span covers in part shows the covered characters marked, the rest not.
  function renderTokens(group) {
    const st = state(group);
    tokenElements(group).forEach((el) => {
      const i = Number(el.dataset.i);
      const token = st.tokens[i];
      const k = spanAt(st, i);
      const whole = k >= 0 && st.spans[k].start <= token.start && token.end <= st.spans[k].end;
      el.className = token.missing ? "tok span-missing" : "tok";
      if (whole) el.classList.add("marked", `sev-${st.spans[k].severity}`);
      if (whole && k === st.active) el.classList.add("active");
      if (k >= 0 && !whole) el.classList.add("partly");
      if (i === st.anchor) el.classList.add("anchor");
      if (i === st.cursor && group.contains(document.activeElement)) el.classList.add("cursor");
      if (!token.missing) pieces(el, st, token, whole ? [] : st.spans);
    });
  }

  // A token's text, with the characters of the spans that cover it in part as marked pieces.
  function pieces(el, st, token, spans) {
    const parts = [];
    let at = token.start;
    spans.forEach((s, k) => {
      const from = Math.max(s.start, token.start);
      const to = Math.min(s.end, token.end);
      if (from >= to) return;
      if (from > at) parts.push({ from: at, to: from });
      parts.push({ from, to, span: s, k });
      at = to;
    });
    if (at < token.end) parts.push({ from: at, to: token.end });
    const key = parts.map((q) => `${q.from}-${q.to}-${q.span ? q.span.severity : ""}-${q.k === st.active}`).join(" ");
    if (el.dataset.parts === key) return;
    el.dataset.parts = key;
    el.textContent = "";
    parts.forEach((q) => {
      const text = st.chars.slice(q.from, q.to).join("");
      if (!q.span) {
        el.appendChild(document.createTextNode(text));
        return;
      }
      const piece = document.createElement("span");
      piece.className = `part marked sev-${q.span.severity}${q.k === st.active ? " active" : ""}`;
      piece.textContent = text;
      el.appendChild(piece);
    });
  }

  // The character (grapheme) of token i under the point (x, y), as {start, end} in code points:
  // the one whose box holds the point, else the nearest.
  function characterAt(group, i, x, y) {
    const st = state(group);
    const token = st.tokens[i];
    const el = group.querySelector(`.tok[data-i="${i}"]`);
    const inside = [token.start, ...st.bounds.filter((b) => b > token.start && b < token.end), token.end];
    let best = null;
    for (let n = 0; n + 1 < inside.length; n += 1) {
      const range = document.createRange();
      range.setStart(...position(el, st.chars.slice(token.start, inside[n]).join("").length));
      range.setEnd(...position(el, st.chars.slice(token.start, inside[n + 1]).join("").length));
      const box = range.getBoundingClientRect();
      const dx = Math.max(box.left - x, 0, x - box.right);
      const dy = Math.max(box.top - y, 0, y - box.bottom);
      const distance = dx + 4 * dy;
      if (!best || distance < best.distance) best = { start: inside[n], end: inside[n + 1], distance };
    }
    return best || { start: token.start, end: token.end };
  }

  // The text node and offset that are `units` UTF-16 code units into an element's text.
  function position(el, units) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let node = walker.nextNode();
    let left = units;
    while (node) {
      const next = walker.nextNode();
      if (left <= node.length || !next) return [node, Math.min(left, node.length)];
      left -= node.length;
      node = next;
    }
    return [el, 0];
  }

  function chip(group, st, span, k) {
    const li = document.createElement("li");
    li.className = `span-chip sev-${span.severity}${k === st.active ? " active" : ""}`;
    if (config.categories.length && !span.category) li.classList.add("needs-category");
    const pick = document.createElement("button");
    pick.type = "button";
    pick.className = "span-pick";
    pick.tabIndex = -1;
    // The marked words keep their own direction and order in any page (a Hebrew span with a
    // Latin name in it, in an English page): an isolate, its direction from its own text.
    pick.dir = "auto";
    const words = document.createElement("bdi");
    words.textContent = excerpt(st, span);
    pick.appendChild(words);
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
    st.edge = "end";
    render(group);
  }

  function removeSpan(group, k) {
    const st = state(group);
    if (k === null || k < 0 || k >= st.spans.length) return;
    commit(group, st.spans.filter((_s, i) => i !== k), null, messages.removed);
  }

  // A new span over tokens a..b (either order).
  function create(group, a, b) {
    const st = state(group);
    const lo = Math.min(a, b);
    let hi = Math.max(a, b);
    // The marker is a span of its own: a selection from the text up to it ends at the text.
    if (st.tokens[hi].missing && hi !== lo) hi -= 1;
    add(group, st.tokens[lo].start, st.tokens[hi].end);
  }

  // A new span over the characters [start, end), unless it overlaps one or there are too many.
  function add(group, start, end) {
    const st = state(group);
    st.anchor = null;
    const span = { start, end, severity: config.severities[0].key };
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
    st.edge = "end";
    commit(group, spans, spans.indexOf(span), messages.created);
  }

  // Content missing, in one click or key: the marker's span (selected if marked already). A start
  // marked in the text is dropped: the marker is an error of its own.
  function markMissing(group) {
    const st = state(group);
    const i = st.tokens.length - 1;
    st.cursor = i;
    st.anchor = null;
    const k = spanAt(st, i);
    if (k >= 0) select(group, k);
    else add(group, st.tokens[i].start, st.tokens[i].end);
  }

  // A click or tap on token i: select the span there, or mark a start, or end the span.
  function tap(group, i) {
    const st = state(group);
    const k = spanAt(st, i);
    if (st.tokens[i].missing) {
      markMissing(group);
      return;
    }
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

  // Shift+arrow: the selected span's moving edge (its end, or its start after Space on it) one
  // character on or back; it never becomes empty, overlaps another or leaves the text.
  function resize(group, forward) {
    const st = state(group);
    const span = st.active === null ? null : st.spans[st.active];
    if (!span || span.start >= st.chars.length) return;
    const value = span[st.edge];
    const next = forward ? st.bounds.find((b) => b > value) : st.bounds.filter((b) => b < value).pop();
    if (next === undefined) return;
    const changed = Object.assign({}, span, { [st.edge]: next });
    if (changed.start >= changed.end) return;
    if (st.spans.some((s, i) => i !== st.active && s.start < changed.end && changed.start < s.end)) {
      note(group, messages.overlap);
      return;
    }
    const k = st.active;
    commit(group, st.spans.map((s, i) => (i === k ? changed : s)), k, "");
  }

  // Space on the selected span: Shift+arrows move its other edge from now on.
  function swapEdge(group) {
    const st = state(group);
    st.edge = st.edge === "end" ? "start" : "end";
    note(group, st.edge === "end" ? messages.edgeEnd : messages.edgeStart);
  }

  // The omission key: m, or the key in m's place on a keyboard that types another alphabet.
  function omissionKey(event) {
    if (event.key === "m" || event.key === "M") return true;
    return /^\p{L}$/u.test(event.key) && !/^[a-z]$/i.test(event.key) && event.code === "KeyM";
  }

  function tokenIndex(element) {
    const tok = element && element.closest ? element.closest(".tok") : null;
    return tok ? Number(tok.dataset.i) : null;
  }

  // The keyboard cursor by `step` tokens (±Infinity: to the first token or the marker).
  function move(group, step) {
    const st = state(group);
    st.cursor = Math.max(0, Math.min(st.tokens.length - 1, st.cursor + step));
    render(group);
    const el = group.querySelector(`.tok[data-i="${st.cursor}"]`);
    if (el) el.scrollIntoView({ block: "nearest" });
  }

  function released(group, event) {
    const st = state(group);
    const down = st.down;
    st.down = null;
    if (down === null) return;
    const to = tokenIndex(document.elementFromPoint(event.clientX, event.clientY));
    group.focus({ preventScroll: true });
    if (to === null) return;
    const touch = event.pointerType === "touch";
    if (to !== down.i && !touch) {
      st.cursor = to;
      create(group, down.i, to);
      return;
    }
    const moved = Math.abs(event.clientX - down.x) + Math.abs(event.clientY - down.y) >= 3;
    if (!touch && moved && !st.tokens[to].missing) {
      const a = characterAt(group, to, down.x, down.y);
      const b = characterAt(group, to, event.clientX, event.clientY);
      if (a.start !== b.start) {
        st.cursor = to;
        add(group, Math.min(a.start, b.start), Math.max(a.end, b.end));
        return;
      }
    }
    tap(group, to);
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
      const key = event.key;
      const severity = config.severities.find((s) => s.shortcut === key);
      if ((key === forward || key === back) && event.shiftKey) {
        resize(group, key === forward);
        return true;
      }
      if (key === forward || key === back || key === "Home" || key === "End") {
        move(group, key === forward ? 1 : key === back ? -1 : key === "Home" ? -Infinity : Infinity);
        return true;
      }
      if (key === " ") {
        if (st.anchor === null && st.active !== null && spanAt(st, st.cursor) === st.active) swapEdge(group);
        else tap(group, st.cursor);
        return true;
      }
      if (omissionKey(event)) {
        markMissing(group);
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
      // Press on a token and release on another: a span over both and all between; press and
      // release on different characters of one token: a span over exactly those characters. A
      // press and release on one character is a tap. Touch taps only (a drag scrolls the page).
      group.addEventListener("pointerdown", (event) => {
        const i = tokenIndex(event.target);
        state(group).down = i === null ? null : { i, x: event.clientX, y: event.clientY };
        if (i !== null) event.preventDefault();
      });
      group.addEventListener("pointerup", (event) => released(group, event));
      group.addEventListener("focus", () => renderTokens(group));
      group.addEventListener("blur", () => renderTokens(group));
    },
  };
})();
