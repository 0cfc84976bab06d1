// The "Add a protocol" form: the mode list offers the chosen kind's modes only, "outputs per
// screen" is hidden for a kind that shows one output a screen, "fluency first" for a kind
// that does not allow it, the document screens for a kind without them (and the window size
// and the document-level score unless document screens are chosen), and a kind's own numbers
// (MQM's weights) for that kind only. Choosing a kind sets k to the kind's own default;
// choosing a preset fills in its fields, which stay editable. The kinds' modes, defaults and
// the presets come from the fields' data attributes (annotation/campaigns/forms.py); the
// server checks the same rules, so without this script a wrong choice is refused with a
// message instead.
(function () {
  "use strict";

  const protocol = document.getElementById("id_protocol");
  const mode = document.getElementById("id_mode");
  if (!protocol || !mode || !protocol.dataset.modes) return;
  const modes = JSON.parse(protocol.dataset.modes);
  const single = JSON.parse(protocol.dataset.singleOutput || "[]");
  const fluencyFirst = JSON.parse(protocol.dataset.fluencyFirst || "[]");
  const outputs = document.getElementById("id_outputs_per_screen");
  const outputsField = outputs ? outputs.closest(".field") : null;
  const fluency = document.getElementById("id_fluency_first");
  const fluencyField = fluency ? fluency.closest(".field") : null;
  const documentKinds = JSON.parse(protocol.dataset.documentScreens || "[]");
  const screen = document.getElementById("id_screen");
  const screenField = screen ? screen.closest(".field") : null;
  const windowInput = document.getElementById("id_document_window");
  const windowField = windowInput ? windowInput.closest(".field") : null;
  const scoreInput = document.getElementById("id_document_score");
  const scoreField = scoreInput ? scoreInput.closest(".field") : null;

  const kindFields = Array.from(document.querySelectorAll("input[data-protocol]"));
  const defaultOutputs = JSON.parse(protocol.dataset.defaultOutputs || "{}");
  const preset = document.getElementById("id_preset");
  const presets = preset ? JSON.parse(preset.dataset.presets || "{}") : {};

  function update() {
    const allowed = modes[protocol.value] || [];
    Array.from(mode.options).forEach((option) => {
      const offered = option.value === "" || allowed.includes(option.value);
      option.hidden = !offered;
      option.disabled = !offered;
    });
    if (!allowed.includes(mode.value) && allowed.length) mode.value = allowed[0];

    kindFields.forEach((input) => {
      const field = input.closest(".field");
      if (field) field.hidden = input.dataset.protocol !== protocol.value;
    });
    if (fluencyField) {
      fluencyField.hidden = !fluencyFirst.includes(protocol.value);
      if (fluencyField.hidden) fluency.checked = false;
    }
    if (screenField) {
      screenField.hidden = !documentKinds.includes(protocol.value);
      if (screenField.hidden) screen.value = "segment";
    }
    const documents = Boolean(screen) && screen.value === "document";
    if (windowField) windowField.hidden = !documents;
    if (scoreField) {
      scoreField.hidden = !documents;
      if (!documents) scoreInput.checked = false;
    }
    // A document screen shows one system's translation: k does not apply.
    if (outputsField) outputsField.hidden = single.includes(protocol.value) || documents;
  }

  function kindChosen() {
    if (outputs && protocol.value in defaultOutputs) {
      outputs.value = String(defaultOutputs[protocol.value]);
    }
    update();
  }

  // A preset's values, by field name: the kind first (it sets which modes and fields apply),
  // then every other field, then the visibility rules again.
  function presetChosen() {
    const values = presets[preset.value];
    if (!values) return;
    protocol.value = values.protocol;
    kindChosen();
    Object.entries(values).forEach(([name, value]) => {
      const input = document.getElementById("id_" + name);
      if (!input || name === "protocol") return;
      if (input.type === "checkbox") input.checked = Boolean(value);
      else input.value = String(value);
    });
    update();
  }

  protocol.addEventListener("change", kindChosen);
  if (preset) preset.addEventListener("change", presetChosen);
  if (screen) screen.addEventListener("change", update);
  update();
})();
