// The inspector's page: the header, the questions, one panel per tab, the wire pane; all of it
// fed by the event stream (store.js), every action sent through api.js.

import { follow } from "./api.js";
import { questionsBox } from "./asking.js";
import { connectionPanel, headerBar } from "./connection.js";
import { h } from "./dom.js";
import { promptsPanel } from "./prompts.js";
import { resourcesPanel } from "./resources.js";
import { apply, on, state } from "./store.js";
import { tasksPanel } from "./tasks.js";
import { toolsPanel } from "./tools.js";
import { wirePane } from "./wire.js";

const TABS = [["connection", "Connection", connectionPanel], ["tools", "Tools", toolsPanel],
              ["resources", "Resources", resourcesPanel], ["prompts", "Prompts", promptsPanel],
              ["tasks", "Tasks", tasksPanel]];

function boot() {
  const bar = headerBar();
  const panels = new Map(TABS.map(([id, , make]) => [id, make()]));
  const buttons = new Map(TABS.map(([id, title]) => [id, h("button", {
    type: "button", role: "tab", class: "tab", dataset: { tab: id }, onclick: () => show(id) }, title)]));
  const counts = new Map();
  const show = (id) => {
    for (const [name, panel] of panels) panel.hidden = name !== id;
    for (const [name, button] of buttons) button.setAttribute("aria-selected", String(name === id));
    document.body.dataset.tab = id;
  };
  const count = (id, n) => {
    const button = buttons.get(id);
    if (!counts.has(id)) {
      counts.set(id, h("span", { class: "count" }));
      button.append(counts.get(id));
    }
    counts.get(id).textContent = n ? ` ${n}` : "";
  };
  on("catalogue", (c) => {
    count("tools", c.tools.length);
    count("resources", c.resources.length + c.resourceTemplates.length);
    count("prompts", c.prompts.length);
  });
  on("task", () => count("tasks", state.tasks.size));
  document.addEventListener("mcpkit:tab", (event) => show(event.detail));
  const main = h("main", { id: "main" }, h("nav", { role: "tablist", id: "tabs" }, [...buttons.values()]),
    questionsBox(), [...panels.values()]);
  document.body.append(bar, h("div", { id: "layout" }, main, wirePane()));
  show("connection");
  follow(apply, (open) => {
    bar.setStream(open);
    document.body.dataset.stream = open ? "open" : "closed";
  });
}

boot();
