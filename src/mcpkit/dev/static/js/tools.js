// Tools: the list with annotations, icons and token costs (the probe's counter), and for the
// chosen tool a call form generated from its inputSchema. A result is shown as content blocks,
// its structuredContent checked against the outputSchema; a tool linked to an MCP App view
// renders the view beside it, handed the call's input and result as a host hands them.

import { act, newId } from "./api.js";
import { AppHost } from "./apps.js";
import { blocks, icon } from "./content.js";
import { badge, clear, details, h, json, time } from "./dom.js";
import { schemaForm } from "./form.js";
import { on, state } from "./store.js";

const HINTS = [["readOnlyHint", "read-only"], ["destructiveHint", "destructive"],
               ["idempotentHint", "idempotent"], ["openWorldHint", "open world"]];
const TASKS = "io.modelcontextprotocol/tasks";

function annotations(tool) {
  const given = tool.annotations || {};
  return HINTS.filter(([key]) => given[key] === true).map(([, text]) =>
    badge(text, text === "destructive" ? "bad" : "quiet"));
}

function tokens(name) {
  const budget = state.catalogue?.budget;
  const cost = budget?.tools?.[name];
  return cost ? badge(`${cost.tokens} tokens`, "tokens") : null;
}

function budgetLine(catalogue) {
  const b = catalogue.budget || {};
  if (b.missing) return h("p", { class: "budget note" }, `Token counts: ${b.missing}`);
  if (b.counting) return h("p", { class: "budget note" }, "Counting tokens…");
  if (!b.totals) return null;
  return h("p", { class: "budget" },
    h("strong", { class: "budget-tools" }, `${b.totals.tools} tokens`),
    ` for ${catalogue.tools.length} tools (${b.encoding}); everything listed, instructions ` +
    `included: `, h("strong", { class: "budget-all" }, `${b.all} tokens`),
    b.instructions ? ` (instructions ${b.instructions})` : "");
}

export function toolsPanel() {
  const list = h("ul", { class: "tools list" });
  const detail = h("div", { class: "detail tool-detail" }, h("p", { class: "note" }, "Choose a tool."));
  const head = h("div", { class: "list-head" });
  const panel = h("div", { class: "panel split", id: "panel-tools" },
    h("div", { class: "side" }, head, list), detail);
  let chosen = null;
  let shownFor = null;
  const results = new Map();  // tool name -> its calls, kept while another tool is shown

  const choose = (name) => {
    chosen = name;
    for (const item of list.children) item.classList.toggle("chosen", item.dataset.name === name);
    const tool = (state.catalogue?.tools || []).find((t) => t.name === name);
    if (!tool) return;
    shownFor = JSON.stringify(tool);
    if (!results.has(name)) results.set(name, h("div", { class: "results" }));
    clear(detail, toolDetail(tool, results.get(name)));
  };
  on("catalogue", (catalogue) => {
    clear(head, budgetLine(catalogue),
      catalogue.rejected?.length ? h("ul", { class: "rejected" }, catalogue.rejected.map((r) =>
        h("li", { class: "problem" }, `${r.name} was dropped: ${r.reason}`))) : null);
    clear(list, catalogue.tools.map((tool) => {
      const view = catalogue.views?.[tool.name];
      const item = h("li", { class: "tool", dataset: { name: tool.name } },
        icon(tool.icons), h("span", { class: "name" }, tool.title || tool.name),
        tool.title ? h("code", { class: "quiet" }, ` ${tool.name}`) : null, " ",
        annotations(tool), view ? badge(view.visibility.includes("model") ? "view" : "app only",
                                        "view") : null,
        tokens(tool.name));
      item.addEventListener("click", () => choose(tool.name));
      return item;
    }));
    const still = catalogue.tools.find((t) => t.name === chosen);
    if (still && JSON.stringify(still) !== shownFor) choose(chosen);
    else if (still) for (const item of list.children) item.classList.toggle("chosen", item.dataset.name === chosen);
  });
  panel.choose = choose;
  return panel;
}

function weights(name) {
  const cost = state.catalogue?.budget?.tools?.[name];
  if (!cost) return null;
  return h("p", { class: "weights" }, `${cost.tokens} tokens: `,
    Object.entries(cost.weight || {}).filter(([, n]) => n > 0).map(([part, n]) => `${part} ${n}`)
      .join(", "));
}

function toolDetail(tool, results) {
  const view = state.catalogue?.views?.[tool.name];
  const form = schemaForm(tool.inputSchema || { type: "object" });
  const offered = TASKS in (state.connection?.extensions || {});
  const asTask = h("input", { type: "checkbox", class: "as-task", checked: offered });
  const callButton = h("button", { type: "submit", class: "call primary" }, "Call");
  const cancel = h("button", { type: "button", class: "cancel-call", hidden: true }, "Cancel");
  const problems = h("p", { class: "problem form-problem" });
  let running = null;
  cancel.addEventListener("click", () => running && act("cancel", { callId: running }).catch(() => {}));
  const submit = async (event) => {
    event.preventDefault();
    problems.textContent = "";
    const left = form.submit();
    if (left.length) {
      problems.textContent = "Fix the arguments first (or send them anyway in raw JSON mode).";
      if (form.element.dataset.mode !== "raw") return;
    }
    let args;
    try {
      args = form.value();
    } catch (error) {
      problems.textContent = `The arguments are not JSON: ${error.message}`;
      return;
    }
    running = newId("call-");
    cancel.hidden = false;
    try {
      await call(tool, view, args, offered && asTask.checked, running, results);
    } finally {
      running = null;
      cancel.hidden = true;
    }
  };
  const callForm = h("form", { class: "call-form", dataset: { tool: tool.name }, onsubmit: submit },
    form.element, problems,
    h("div", { class: "actions" }, callButton, cancel,
      offered ? h("label", {}, asTask, " run as a task (the server may make it one)") : null));
  return h("div", { class: "tool-view", dataset: { tool: tool.name } },
    h("h2", {}, icon(tool.icons), tool.title || tool.name, " ", annotations(tool)),
    tool.title ? h("p", {}, h("code", {}, tool.name)) : null,
    tool.description ? h("p", { class: "description" }, tool.description) : null,
    view ? h("p", { class: "note" }, `Shown in the MCP App view ${view.uri} (callable by ` +
      `${view.visibility.join(" and ")}).`) : null,
    weights(tool.name),
    details("Input schema", json(tool.inputSchema || {})),
    tool.outputSchema ? details("Output schema", json(tool.outputSchema)) : null,
    tool.annotations ? details("Annotations", json(tool.annotations)) : null,
    h("h3", {}, "Call"), callForm, results);
}

function errorBlock(error) {
  const answer = error.answer || {};
  return h("div", { class: "call-error" },
    h("p", { class: "problem" }, answer.error || error.message),
    answer.meaning ? h("p", { class: "meaning" }, answer.meaning) : null,
    answer.data !== undefined && answer.data !== null ? json(answer.data) : null);
}

function checkLine(check) {
  if (!check) return null;
  return h("p", { class: "check", dataset: { status: check.status } },
    badge(check.status, check.status === "invalid" ? "bad" : check.status === "valid" ? "good" : "quiet"),
    ` ${check.text}`);
}

export function resultBlock(result, check) {
  return h("div", { class: `result ${result.isError ? "is-error" : ""}` },
    result.isError ? h("p", { class: "problem" }, "The tool reported an error (isError: true).") : null,
    h("div", { class: "blocks" }, blocks(result.content, {
      onLink: (uri) => document.dispatchEvent(new CustomEvent("mcpkit:read", { detail: uri })) })),
    result.structuredContent !== undefined
      ? h("div", {}, h("h4", {}, "structuredContent"), json(result.structuredContent, "json structured"))
      : null,
    checkLine(check),
    details("The whole result", json(result)));
}

async function call(tool, view, args, asTask, callId, results) {
  const progress = h("p", { class: "progress" });
  const body = h("div", { class: "call-body" });
  const card = h("div", { class: "call-card", dataset: { call: callId, tool: tool.name } },
    h("p", { class: "call-head" }, time(Date.now()), " ", h("code", {}, `${tool.name}(${JSON.stringify(args)})`)),
    progress, body);
  results.prepend(card);
  const stopProgress = watchProgress(callId, progress);
  let host = null;
  if (view) {
    try {
      const prepared = await act("view", { uri: view.uri });
      host = new AppHost({ view: prepared.view, tool, call: callId });
      card.append(host.element);
      host.toolInput(args);
    } catch (error) {
      card.append(h("p", { class: "problem view-problem" }, `The view cannot be shown: ${error.message}`));
    }
  }
  try {
    const answer = await act("call", { callId, name: tool.name, arguments: args, task: asTask });
    if (answer.task) {
      clear(body, h("p", { class: "became-task" }, "The server made this call a task: ",
        h("code", { class: "task-id" }, answer.task), " (followed under Tasks)"));
      const stop = on("task", (task) => {
        if (task.id !== answer.task || card.dataset.done) return;
        progress.textContent = `${task.status}${task.statusMessage ? `: ${task.statusMessage}` : ""}`;
        if (task.result) {
          card.dataset.done = "true";
          body.append(resultBlock(task.result, null));
          if (host) host.toolResult(task.result);
          stop();
        } else if (task.error || task.status === "cancelled" || task.status === "failed") {
          card.dataset.done = "true";
          if (host) host.toolCancelled(task.error?.message || task.status);
          stop();
        }
      });
      return;
    }
    clear(body, resultBlock(answer.result, answer.check));
    card.dataset.done = "true";
    if (host) host.toolResult(answer.result);
  } catch (error) {
    clear(body, errorBlock(error));
    card.dataset.done = "true";
    if (host) host.toolCancelled(error.message);
  } finally {
    stopProgress();
  }
}

function watchProgress(callId, line) {
  return on("progress", (p) => {
    if (p.call !== callId) return;
    const total = p.total ? `/${p.total}` : "";
    line.textContent = `progress ${p.progress}${total}${p.message ? `: ${p.message}` : ""}`;
  });
}
