// Resources: the list and the templates (their variables completed as they are typed), a read
// shown in the viewer of its MIME type, and subscriptions: an update the server announces is
// listed and the resource read again when it is the one shown.

import { act } from "./api.js";
import { AppHost } from "./apps.js";
import { contents } from "./content.js";
import { badge, clear, h, time } from "./dom.js";
import { on, state } from "./store.js";

const VARIABLE = /\{([+#./;?&]?)([^}]+)\}/g;

export function variables(template) {
  const names = [];
  for (const match of template.matchAll(VARIABLE)) {
    for (const name of match[2].split(",")) names.push(name.replace(/[*]|:\d+$/g, "").trim());
  }
  return names;
}

// RFC 6570 levels 1 and 2 (simple and reserved expansion), enough for resource templates.
export function expand(template, values) {
  return template.replace(VARIABLE, (_, operator, list) => list.split(",").map((raw) => {
    const name = raw.replace(/[*]|:\d+$/g, "").trim();
    const value = values[name] ?? "";
    return operator === "+" || operator === "#" ? encodeURI(value) : encodeURIComponent(value);
  }).join(","));
}

export function resourcesPanel() {
  const list = h("ul", { class: "resources list" });
  const templates = h("ul", { class: "templates list" });
  const reader = h("div", { class: "detail reader" }, h("p", { class: "note" }, "Choose a resource."));
  const any = h("input", { type: "text", class: "read-uri", placeholder: "any URI" });
  const readAny = h("form", { class: "read-any", onsubmit: (event) => {
    event.preventDefault();
    if (any.value.trim()) read(any.value.trim());
  } }, any, h("button", { type: "submit" }, "Read"));
  const panel = h("div", { class: "panel split", id: "panel-resources" },
    h("div", { class: "side" }, h("h3", {}, "Resources"), list, h("h3", {}, "Templates"), templates,
      h("h3", {}, "By URI"), readAny),
    reader);
  let shown = null;
  const updates = new Map();

  const read = async (uri) => {
    shown = uri;
    const box = h("div", { class: "read", dataset: { uri } }, h("p", { class: "note" }, `Reading ${uri}…`));
    clear(reader, h("h2", {}, h("code", {}, uri)), subscribeButton(uri), box);
    try {
      const { result } = await act("read", { uri });
      clear(box, h("p", { class: "note" }, `read at ${time(Date.now())}`),
        (result.contents || []).map((item) => contents(item, { onRender: (view) => renderView(view, box) })));
      box.dataset.done = "true";
    } catch (error) {
      clear(box, h("p", { class: "problem" }, error.message),
        error.answer?.meaning ? h("p", { class: "meaning" }, error.answer.meaning) : null);
      box.dataset.done = "true";
    }
  };
  const subscribeButton = (uri) => {
    const on_ = (state.catalogue?.subscribed || []).includes(uri);
    const button = h("button", { type: "button", class: "subscribe", dataset: { on: String(on_) } },
      on_ ? "Unsubscribe" : "Subscribe");
    button.addEventListener("click", async () => {
      const { subscribed } = await act("subscribe", { uri, on: !on_ });
      if (state.catalogue) state.catalogue.subscribed = subscribed;
      button.replaceWith(subscribeButton(uri));
    });
    return button;
  };
  on("catalogue", (catalogue) => {
    clear(list, catalogue.resources.length ? catalogue.resources.map((r) => {
      const item = h("li", { class: "resource", dataset: { uri: r.uri } },
        h("span", { class: "name" }, r.title || r.name || r.uri), " ", h("code", { class: "quiet" }, r.uri),
        r.mimeType ? badge(r.mimeType, "quiet") : null,
        updates.get(r.uri) ? badge(`updated ×${updates.get(r.uri)}`, "good") : null);
      item.addEventListener("click", () => read(r.uri));
      return item;
    }) : h("li", { class: "note" }, "None listed."));
    clear(templates, catalogue.resourceTemplates.length ? catalogue.resourceTemplates.map((t) =>
      templateItem(t, read)) : h("li", { class: "note" }, "None listed."));
  });
  on("changed", (change) => {
    if (change.method !== "notifications/resources/updated") return;
    const uri = change.params?.uri;
    updates.set(uri, (updates.get(uri) || 0) + 1);
    for (const item of list.querySelectorAll("li.resource")) {
      if (item.dataset.uri === uri) {
        item.querySelector(".badge.good")?.remove();
        item.append(badge(`updated ×${updates.get(uri)}`, "good"));
      }
    }
    if (uri === shown) read(uri);
  });
  document.addEventListener("mcpkit:read", (event) => {
    document.dispatchEvent(new CustomEvent("mcpkit:tab", { detail: "resources" }));
    read(event.detail);
  });
  panel.read = read;
  return panel;
}

function renderView(item, box) {
  act("view", { uri: item.uri }).then(({ view }) => {
    const host = new AppHost({ view, tool: null, call: null });
    box.append(host.element);
  }, (error) => box.append(h("p", { class: "problem" }, `The view cannot be shown: ${error.message}`)));
}

function templateItem(template, read) {
  const names = variables(template.uriTemplate);
  const inputs = new Map();
  const preview = h("code", { class: "expanded" });
  const values = () => Object.fromEntries([...inputs].map(([n, i]) => [n, i.value]));
  const update = () => { preview.textContent = expand(template.uriTemplate, values()); };
  const fields = names.map((name) => {
    const options = h("datalist", { id: `complete-${template.uriTemplate}-${name}`.replace(/[^\w-]/g, "_") });
    const input = h("input", { type: "text", name, list: options.id, dataset: { variable: name },
                               autocomplete: "off" });
    inputs.set(name, input);
    let timer = null;
    input.addEventListener("input", () => {
      update();
      clearTimeout(timer);
      timer = setTimeout(() => complete(template, name, input, values(), options), 150);
    });
    return h("label", { class: "variable" }, h("span", {}, name), input, options);
  });
  const go = h("button", { type: "button" }, "Read");
  go.addEventListener("click", () => read(expand(template.uriTemplate, values())));
  update();
  return h("li", { class: "template", dataset: { template: template.uriTemplate } },
    h("span", { class: "name" }, template.title || template.name || ""), " ",
    h("code", {}, template.uriTemplate),
    template.description ? h("p", { class: "description" }, template.description) : null,
    h("div", { class: "variables" }, fields), preview, go);
}

export async function complete(template, name, input, values, options) {
  const context = { ...values };
  delete context[name];
  try {
    const { completion } = await act("complete", {
      ref: template.ref || { type: "ref/resource", uri: template.uriTemplate }, argument: name,
      value: input.value, context: Object.keys(context).length ? context : null });
    clear(options, (completion.values || []).map((v) => h("option", { value: v })));
    input.dataset.completions = JSON.stringify(completion.values || []);
  } catch (error) {
    input.dataset.completions = "[]";
    input.title = error.message;
  }
}
