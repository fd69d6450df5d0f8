// The server's questions, answered here: a form (an input_required round, a task's question, a
// legacy elicitation/create), a page to open (URL mode: its address shown, opened only by the
// user), or a sampling request (the messages shown, the reply written by the user). Each stays
// until it is answered or the call that asked it ends; an answer the form refuses is said at
// its fields and the question stays.

import { act } from "./api.js";
import { h, json, outLink } from "./dom.js";
import { schemaForm } from "./form.js";
import { on } from "./store.js";

export function questionsBox() {
  const box = h("div", { id: "questions", "aria-live": "polite" });
  const cards = new Map();
  on("question", (question) => {
    if (cards.has(question.id)) return;
    const card = questionCard(question);
    cards.set(question.id, card);
    box.append(card);
    box.dataset.open = String(cards.size);
  });
  on("question.closed", ({ id }) => {
    cards.get(id)?.remove();
    cards.delete(id);
    box.dataset.open = String(cards.size);
  });
  return box;
}

function who(question) {
  return h("p", { class: "who" }, h("strong", {}, question.server || "The server"),
    question.origin ? ` asks, for ${question.origin}` : " asks",
    question.key ? h("code", { class: "quiet" }, ` (${question.key})`) : null, ":");
}

function problemsOf(error, form, line) {
  const problems = error.answer?.problems;
  line.textContent = error.message;
  if (problems && form) {
    for (const [name, problem] of Object.entries(problems)) {
      const wrapper = form.element.querySelector(`[data-path="/${CSS.escape(name)}"] > .problem`);
      if (wrapper) wrapper.textContent = problem;
    }
  }
}

function questionCard(question) {
  const line = h("p", { class: "problem" });
  const send = (answer, form = null) => act("answer", { id: question.id, answer })
    .catch((error) => problemsOf(error, form, line));
  const card = h("div", { class: `question card kind-${question.kind}`,
                          dataset: { id: question.id, kind: question.kind } }, who(question),
    question.message ? h("p", { class: "message" }, question.message) : null);
  if (question.kind === "form") {
    const form = schemaForm(question.schema);
    const accept = h("button", { type: "submit", class: "primary accept" }, "Accept");
    card.append(h("form", { onsubmit: (event) => {
      event.preventDefault();
      if (form.submit().length) {
        line.textContent = "Some answers do not fit the form yet.";
        return;
      }
      let content;
      try {
        content = form.value();
      } catch (error) {
        line.textContent = `not JSON: ${error.message}`;
        return;
      }
      send({ action: "accept", content }, form);
    } }, form.element, h("div", { class: "actions" }, accept, decline(send), cancel(send))), line);
  } else if (question.kind === "url") {
    let host = "";
    try {
      host = new URL(question.url).host;
    } catch { /* shown as it is */ }
    card.append(h("p", {}, "It asks you to open a page on ", h("strong", { class: "url-host" }, host || "?"),
      ": ", outLink(question.url, "url")),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary accept", onclick: () => send({ action: "accept" }) },
          "I opened it"), decline(send), cancel(send)), line);
  } else {
    const params = question.params || {};
    const reply = h("textarea", { rows: 4, class: "sampling-reply", placeholder: "the model's reply" });
    const model = h("input", { type: "text", class: "sampling-model", value: "mcpkit-dev (a person)" });
    card.append(
      params.systemPrompt ? h("p", {}, "System prompt: ", h("q", {}, params.systemPrompt)) : null,
      h("ol", { class: "sampling-messages" }, (params.messages || []).map((m) =>
        h("li", {}, h("span", { class: "role" }, m.role), " ",
          m.content?.type === "text" ? m.content.text : JSON.stringify(m.content)))),
      params.maxTokens ? h("p", { class: "note" }, `at most ${params.maxTokens} tokens`) : null,
      h("details", {}, h("summary", {}, "The whole request"), json(params)),
      h("label", {}, "Reply ", reply), h("label", {}, "Model ", model),
      h("div", { class: "actions" },
        h("button", { type: "button", class: "primary accept", onclick: () => send({
          role: "assistant", content: { type: "text", text: reply.value }, model: model.value,
          stopReason: "endTurn" }) }, "Send reply"),
        h("button", { type: "button", class: "decline", onclick: () => send({ action: "decline" }) },
          "Decline")), line);
  }
  return card;
}

const decline = (send) => h("button", { type: "button", class: "decline",
                                        onclick: () => send({ action: "decline" }) }, "Decline");
const cancel = (send) => h("button", { type: "button", class: "cancel",
                                       onclick: () => send({ action: "cancel" }) }, "Cancel");
