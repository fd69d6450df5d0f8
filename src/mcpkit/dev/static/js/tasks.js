// Tasks (the Tasks extension): each task a call became, or one reattached by its id, live: its
// status and status message (a bar when the message ends in a count such as "(3/5)"), the
// questions it waits on (answered in the questions above), its result or error; get, cancel,
// and answers sent by hand (tasks/update).

import { act } from "./api.js";
import { badge, details, h, json } from "./dom.js";
import { on } from "./store.js";
import { resultBlock } from "./tools.js";

const COUNT = /\((\d+)\/(\d+)\)\s*$/;

export function tasksPanel() {
  const board = h("div", { class: "task-board" });
  const idInput = h("input", { type: "text", class: "task-id-input", placeholder: "task id" });
  const said = h("span", { class: "note" });
  const attach = h("button", { type: "button", class: "attach" }, "Reattach");
  attach.addEventListener("click", async () => {
    const id = idInput.value.trim();
    if (!id) return;
    try {
      await act("task", { op: "attach", id });
      said.textContent = ` following ${id}`;
    } catch (error) {
      said.textContent = ` ${error.message}`;
    }
  });
  const cards = new Map();
  on("task", (task) => {
    const card = taskCard(task);
    const old = cards.get(task.id);
    if (old) old.replaceWith(card);
    else board.prepend(card);
    cards.set(task.id, card);
  });
  return h("div", { class: "panel", id: "panel-tasks" },
    h("div", { class: "reattach" }, h("label", {}, "Follow a task by its id: ", idInput), attach, said),
    board, h("p", { class: "note" }, "A call becomes a task when the server offers the Tasks " +
      "extension and the call asks for it (the tool form's \"run as a task\")."));
}

function taskCard(task) {
  const latest = task.latest || {};
  const status = task.status || latest.status || "unknown";
  const message = task.statusMessage || latest.statusMessage || "";
  const counted = message.match(COUNT);
  const waiting = latest.inputRequests ? Object.keys(latest.inputRequests) : [];
  const said = h("span", { class: "note" });
  const run = (op, extra = {}) => act("task", { op, id: task.id, ...extra }).then(
    () => { said.textContent = ` ${op} sent`; }, (error) => { said.textContent = ` ${error.message}`; });
  const terminal = ["completed", "failed", "cancelled"].includes(status);
  const update = h("textarea", { rows: 2, class: "task-update", placeholder: '{"key": {"action": "accept", "content": {...}}}' });
  return h("div", { class: "task-card card", dataset: { id: task.id, status } },
    h("h3", {}, h("code", { class: "task-id" }, task.id), " ", badge(status, `status-${status}`),
      task.tool ? h("code", { class: "task-call" }, ` ${task.tool}(${JSON.stringify(task.arguments || {})})`)
        : null),
    message ? h("p", { class: "status-message" }, message) : null,
    counted ? h("progress", { max: counted[2], value: counted[1] }) : null,
    waiting.length ? h("p", { class: "waiting" }, `waiting on: ${waiting.join(", ")}`) : null,
    task.note ? h("p", { class: "note" }, task.note) : null,
    task.error ? h("p", { class: "problem" }, `${task.error.code ?? ""} ${task.error.message}`.trim(),
      task.error.meaning ? h("span", { class: "meaning" }, ` (${task.error.meaning})`) : null) : null,
    task.result ? resultBlock(task.result, null) : null,
    h("div", { class: "actions" },
      h("button", { type: "button", class: "get", onclick: () => run("get") }, "Get"),
      terminal ? null : h("button", { type: "button", class: "cancel-task", onclick: () => run("cancel") }, "Cancel"),
      terminal ? null : details("Send answers (tasks/update)", update,
        h("button", { type: "button", onclick: () => {
          try {
            run("update", { responses: JSON.parse(update.value) });
          } catch (error) {
            said.textContent = ` not JSON: ${error.message}`;
          }
        } }, "Send")),
      said),
    details("State", json(latest)));
}
