// The answer widgets of the scales screen (templates/annotation/screens/scales.html): choices
// for a short scale, a slider for a long one. The annotation page's script (annotate.js) finds a
// question's widget by its fieldset's data-widget and uses only what a widget offers:
//   value(group)          the answer, or null when there is none;
//   set(group, v)         show v as the answer; false when v is not an answer here;
//   reset(group)          clear the answer (a new item in place; data-output is already new);
//   key(group, event, page) handle a key on the focused question; true when handled. ``page``
//                         offers setValue(group, v) (set, mark answered, count as a change),
//                         advance(group) (focus the next unanswered question) and text(group)
//                         (the question's translation exactly as stored, for counting offsets);
//   init(group, page)     wire the widget's own controls (once, on load).
// A kind with another screen registers its own widgets the same way, in its own script.
(function () {
  "use strict";

  const widgets = (window.EvalSiteWidgets = window.EvalSiteWidgets || {});

  widgets.choices = {
    value(group) {
      const checked = group.querySelector("input[type=radio]:checked");
      return checked ? Number(checked.value) : null;
    },
    set(group, v) {
      const radio = group.querySelector(`input[type=radio][value="${v}"]`);
      if (!radio) return false;
      radio.checked = true;
      return true;
    },
    reset(group) {
      group.querySelectorAll("input[type=radio]").forEach((radio) => {
        radio.name = `o${group.dataset.output}-${group.dataset.criterion}`;
        radio.checked = false;
      });
    },
    // A digit answers the question and moves on to the next one without an answer.
    key(group, event, page) {
      if (!/^[0-9]$/.test(event.key)) return false;
      if (page.setValue(group, Number(event.key))) page.advance(group);
      return true;
    },
    init() {},
  };

  // Digits typed in quick succession on one slider form one number: 7 then 5 → 75. On a
  // screen of several sliders (a document's segments) a digit on another slider starts anew.
  let typed = "";
  let typedAt = 0;
  let typedOn = null;

  function range(group) {
    return group.querySelector("input[type=range]");
  }

  widgets.slider = {
    value(group) {
      const input = range(group);
      return input.classList.contains("unset") ? null : Number(input.value);
    },
    set(group, v) {
      const input = range(group);
      input.value = String(Math.max(Number(input.min), Math.min(Number(input.max), v)));
      input.classList.remove("unset");
      group.querySelector(".slider-value").textContent = input.value;
      // The focused question is the slider a screen reader announces (role="slider").
      group.setAttribute("aria-valuenow", input.value);
      return true;
    },
    reset(group) {
      const input = range(group);
      input.value = input.min;
      input.classList.add("unset");
      group.querySelector(".slider-value").textContent = "—";
      group.removeAttribute("aria-valuenow");
      typed = "";
    },
    key(group, event, page) {
      const input = range(group);
      const key = event.key;
      if (/^[0-9]$/.test(key)) {
        const now = Date.now();
        typed = now - typedAt < 900 && typedOn === group ? typed + key : key;
        typedAt = now;
        typedOn = group;
        page.setValue(group, Math.min(Number(input.max), Number(typed)));
        return true;
      }
      if (!["ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End"].includes(key)) {
        return false;
      }
      const base = input.classList.contains("unset") ? 50 : Number(input.value);
      const delta = { ArrowLeft: -1, ArrowRight: 1, PageUp: 10, PageDown: -10 }[key];
      if (key === "Home") page.setValue(group, Number(input.min));
      else if (key === "End") page.setValue(group, Number(input.max));
      else page.setValue(group, base + delta);
      return true;
    },
    // An unset slider rests at its minimum with the thumb hidden, so a click or tap on the
    // minimum changes nothing and fires no "input": take the value on release and click too.
    init(group, page) {
      const input = range(group);
      const take = () => page.setValue(group, Number(input.value));
      ["input", "change", "pointerup", "click"].forEach((type) => input.addEventListener(type, take));
    },
  };
})();
