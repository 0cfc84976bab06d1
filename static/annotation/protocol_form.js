// The "Add a protocol" form: the mode list offers the chosen kind's modes only, "outputs per
// screen" is hidden for a kind that shows one output a screen, "fluency first" for a kind
// that does not allow it, and a kind's own numbers (MQM's weights) for that kind only. The kinds' modes come from
// the protocol field's data attributes (annotation/campaigns/forms.py); the server checks the
// same rules, so without this script a wrong choice is refused with a message instead.
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

  const kindFields = Array.from(document.querySelectorAll("input[data-protocol]"));

  function update() {
    const allowed = modes[protocol.value] || [];
    Array.from(mode.options).forEach((option) => {
      const offered = option.value === "" || allowed.includes(option.value);
      option.hidden = !offered;
      option.disabled = !offered;
    });
    if (!allowed.includes(mode.value) && allowed.length) mode.value = allowed[0];
    if (outputsField) outputsField.hidden = single.includes(protocol.value);
    kindFields.forEach((input) => {
      const field = input.closest(".field");
      if (field) field.hidden = input.dataset.protocol !== protocol.value;
    });
    if (fluencyField) {
      fluencyField.hidden = !fluencyFirst.includes(protocol.value);
      if (fluencyField.hidden) fluency.checked = false;
    }
  }

  protocol.addEventListener("change", update);
  update();
})();
