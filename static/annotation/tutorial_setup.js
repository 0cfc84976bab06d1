// The organizer's tutorial page: expected error spans marked with the mouse. The item form's
// translations are shown as the server will store them, the characters selected in one of them
// (or its "missing" marker) become a line "n: start-end [severity [category]]" of the
// "Expected error spans" field, which the server checks as it checks typed lines. Offsets are
// code points of the stored text, as the annotator's span editor counts them.
(function () {
  "use strict";

  const panel = document.getElementById("span-marker");
  if (!panel) return;
  const form = panel.closest("form");
  const outputsField = form.querySelector("textarea[name=outputs]");
  const spansField = form.querySelector("textarea[name=spans]");
  const list = panel.querySelector(".marker-outputs");
  const template = document.getElementById("marker-output");
  const severity = panel.querySelector(".marker-severity");
  const category = panel.querySelector(".marker-category");
  const add = panel.querySelector(".marker-add");

  // The server stores each non-blank line of "Outputs" as Python's line.strip() of
  // str.splitlines() (annotation/tutorial/forms.py): the same line breaks and white space here,
  // so that an offset counted on this text is one on the stored text.
  const LINE_BREAK = /\r\n|[\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029]/;
  const SPACE =
    "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
  const STRIP = new RegExp(`^${SPACE}+|${SPACE}+$`, "g");
  // A typed line as the server reads it: output, start, end, severity, category.
  const SPAN_LINE = /^\s*(\d+)\s*:\s*(\d+)\s*[-–]\s*(\d+)\s*(\S+)?\s*(\S+)?\s*$/;

  let chosen = null; // {n, start, end}: the characters selected, not yet added

  function outputs() {
    return outputsField.value
      .split(LINE_BREAK)
      .map((line) => line.replace(STRIP, ""))
      .filter((line) => line.length > 0);
  }

  function expected() {
    const found = {};
    spansField.value.split(/\r\n|\n|\r/).forEach((line) => {
      const m = SPAN_LINE.exec(line);
      if (m) (found[m[1]] = found[m[1]] || []).push([Number(m[2]), Number(m[3])]);
    });
    return found;
  }

  // One translation: its text with the expected spans highlighted, then its "missing" marker.
  function item(text, n, spans) {
    const li = template.content.firstElementChild.cloneNode(true);
    li.dataset.output = String(n);
    const chars = Array.from(text);
    const covered = chars.map(() => false);
    let missing = false;
    spans.forEach(([start, end]) => {
      for (let k = start; k < Math.min(end, chars.length); k += 1) covered[k] = true;
      if (start <= chars.length && end > chars.length) missing = true;
    });
    const box = li.querySelector(".marker-text");
    for (let k = 0; k < chars.length; ) {
      let j = k;
      while (j < chars.length && covered[j] === covered[k]) j += 1;
      const run = chars.slice(k, j).join("");
      if (covered[k]) {
        const mark = document.createElement("mark");
        mark.textContent = run;
        box.appendChild(mark);
      } else {
        box.appendChild(document.createTextNode(run));
      }
      k = j;
    }
    const marker = li.querySelector(".marker-missing");
    marker.classList.toggle("expected", missing);
    marker.addEventListener("click", () => choose(n, chars.length, chars.length + 1));
    return li;
  }

  function render() {
    const texts = outputs();
    const spans = expected();
    list.textContent = "";
    texts.forEach((text, i) => list.appendChild(item(text, i + 1, spans[String(i + 1)] || [])));
    panel.querySelector(".marker-empty").hidden = texts.length > 0;
  }

  function choose(n, start, end) {
    const text = outputs()[n - 1];
    if (text === undefined) return;
    const chars = Array.from(text);
    chosen = { n, start, end };
    panel.querySelector(".marker-none").hidden = true;
    panel.querySelector(".marker-some").hidden = false;
    panel.querySelector(".marker-n").textContent = String(n);
    panel.querySelector(".marker-chars").textContent =
      start >= chars.length
        ? panel.querySelector(".marker-missing").textContent
        : chars.slice(start, end).join("");
    panel.querySelector(".marker-range").textContent = `${start}–${end}`;
    add.disabled = false;
  }

  function forget() {
    chosen = null;
    panel.querySelector(".marker-none").hidden = false;
    panel.querySelector(".marker-some").hidden = true;
    add.disabled = true;
  }

  // Code points of ``text`` before the point (node, offset) inside ``box``, which holds the text
  // (in text nodes and marks) and nothing else.
  function codePoints(box, text, node, offset) {
    const before = document.createRange();
    before.selectNodeContents(box);
    before.setEnd(node, offset);
    return Array.from(text.slice(0, before.toString().length)).length;
  }

  // The selection, cut to the one translation it touches (none when it touches two or none).
  function selected() {
    const selection = window.getSelection();
    if (!selection.rangeCount || selection.isCollapsed) return null;
    const range = selection.getRangeAt(0);
    const boxes = Array.from(list.querySelectorAll(".marker-text")).filter((box) =>
      range.intersectsNode(box),
    );
    if (boxes.length !== 1) return null;
    const box = boxes[0];
    const inner = document.createRange();
    inner.selectNodeContents(box);
    if (range.compareBoundaryPoints(Range.START_TO_START, inner) > 0) {
      inner.setStart(range.startContainer, range.startOffset);
    }
    if (range.compareBoundaryPoints(Range.END_TO_END, inner) < 0) {
      inner.setEnd(range.endContainer, range.endOffset);
    }
    const n = Number(box.closest("li").dataset.output);
    const text = outputs()[n - 1];
    const start = codePoints(box, text, inner.startContainer, inner.startOffset);
    const end = codePoints(box, text, inner.endContainer, inner.endOffset);
    return end > start ? { n, start, end } : null;
  }

  document.addEventListener("selectionchange", () => {
    const span = selected();
    if (span) choose(span.n, span.start, span.end);
  });

  // A category is given with a severity only (the line's third word is the severity).
  function categoryState() {
    if (!category) return;
    category.disabled = !severity.value;
    if (!severity.value) category.value = "";
  }
  severity.addEventListener("change", categoryState);

  add.addEventListener("click", () => {
    if (!chosen) return;
    let line = `${chosen.n}: ${chosen.start}-${chosen.end}`;
    if (severity.value) line += ` ${severity.value}`;
    if (severity.value && category && category.value) line += ` ${category.value}`;
    const before = spansField.value.replace(/\s+$/, "");
    spansField.value = before ? `${before}\n${line}` : line;
    window.getSelection().removeAllRanges();
    forget();
    render();
  });

  outputsField.addEventListener("input", () => {
    forget();
    render();
  });
  spansField.addEventListener("input", render);
  categoryState();
  render();
  panel.hidden = false;
})();
