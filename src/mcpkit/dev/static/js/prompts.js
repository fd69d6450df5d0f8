// Prompts: the list, a prompt's arguments (required ones marked, each completed as it is
// typed), and the messages it renders, each with its role and content blocks.

import { act } from "./api.js";
import { blocks } from "./content.js";
import { clear, h, json } from "./dom.js";
import { complete } from "./resources.js";
import { on } from "./store.js";

export function promptsPanel() {
  const list = h("ul", { class: "prompts list" });
  const detail = h("div", { class: "detail prompt-detail" }, h("p", { class: "note" }, "Choose a prompt."));
  const panel = h("div", { class: "panel split", id: "panel-prompts" }, h("div", { class: "side" }, list), detail);
  on("catalogue", (catalogue) => {
    clear(list, catalogue.prompts.length ? catalogue.prompts.map((prompt) => {
      const item = h("li", { class: "prompt", dataset: { name: prompt.name } },
        h("span", { class: "name" }, prompt.title || prompt.name),
        prompt.description ? h("p", { class: "description" }, prompt.description) : null);
      item.addEventListener("click", () => clear(detail, promptView(prompt)));
      return item;
    }) : h("li", { class: "note" }, "None listed."));
  });
  return panel;
}

function promptView(prompt) {
  const inputs = new Map();
  const values = () => Object.fromEntries([...inputs].filter(([, i]) => i.value !== "")
    .map(([n, i]) => [n, i.value]));
  const ref = { ref: { type: "ref/prompt", name: prompt.name } };
  const fields = (prompt.arguments || []).map((argument) => {
    const options = h("datalist", { id: `prompt-${prompt.name}-${argument.name}`.replace(/[^\w-]/g, "_") });
    const input = h("input", { type: "text", name: argument.name, list: options.id, autocomplete: "off" });
    inputs.set(argument.name, input);
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => complete(ref, argument.name, input, values(), options), 150);
    });
    return h("div", { class: "field", dataset: { path: `/${argument.name}` } },
      h("label", { class: "label" }, h("span", { class: "name" }, argument.name),
        argument.required ? h("span", { class: "required" }, " *") : null),
      input, options, argument.description ? h("div", { class: "about" }, argument.description) : null);
  });
  const out = h("div", { class: "messages" });
  const problem = h("p", { class: "problem" });
  const get = h("button", { type: "submit", class: "primary" }, "Get prompt");
  const form = h("form", { class: "prompt-form", onsubmit: async (event) => {
    event.preventDefault();
    problem.textContent = "";
    const missing = (prompt.arguments || []).filter((a) => a.required && !values()[a.name]);
    if (missing.length) {
      problem.textContent = `required: ${missing.map((a) => a.name).join(", ")}`;
      return;
    }
    try {
      const { result } = await act("prompt", { name: prompt.name, arguments: values() });
      clear(out, result.description ? h("p", { class: "description" }, result.description) : null,
        (result.messages || []).map((message) => h("div", { class: `message role-${message.role}` },
          h("span", { class: "role" }, message.role),
          blocks(Array.isArray(message.content) ? message.content : [message.content]))));
      out.dataset.done = "true";
    } catch (error) {
      clear(out, h("p", { class: "problem" }, error.message),
        error.answer?.meaning ? h("p", { class: "meaning" }, error.answer.meaning) : null);
    }
  } }, fields, problem, get);
  return h("div", { class: "prompt-view", dataset: { name: prompt.name } },
    h("h2", {}, prompt.title || prompt.name),
    prompt.description ? h("p", { class: "description" }, prompt.description) : null,
    form, out, h("details", {}, h("summary", {}, "Definition"), json(prompt)));
}
