// A QTI 3 delivery page, for tests/test_questions.py: Citolab's player, @citolab/qti-components
// (fetched pinned into the cache, never shipped), shows one item of a package at a time as the
// player's own transformer turns its XML into the player's elements. The test answers it by
// clicking a choice as a candidate would, then ends the attempt as a delivery system does:
// harness.score() runs the item's response processing and reports what the player then holds
// and shows.

import { qtiTransformItem } from "./qti-components.js";

const player = document.getElementById("player");
const item = () => player.querySelector("qti-assessment-item");

window.harness = {
  // Show the item at HREF (relative to this page); -> its identifier, once it is drawn
  async show(href) {
    const transformed = await qtiTransformItem().load(href);
    player.replaceChildren(transformed.htmlDoc());
    await item().updateComplete;
    return item().identifier;
  },

  // End the attempt: -> {score, response, feedback: the identifier of each modal feedback shown}
  async score() {
    const shown = item();
    shown.processResponse();
    const feedback = [...shown.querySelectorAll("qti-modal-feedback")];
    await Promise.all(feedback.map((f) => f.updateComplete));
    const open = feedback.filter((f) => f.shadowRoot.querySelector("dialog[open]"));
    return {
      score: shown.getOutcome("SCORE").value,
      response: shown.variables.find((v) => v.identifier === "RESPONSE").value,
      feedback: open.map((f) => f.getAttribute("identifier")),
    };
  },
};
document.documentElement.classList.add("ready");
