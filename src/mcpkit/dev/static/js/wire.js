// The wire pane: every JSON-RPC message of the connection, both ways, as it happened: when, how
// long its answer took, the HTTP status and headers that carried it, an error's meaning; each
// request copyable as the mcpkit command or the curl command that sends it again.

import { badge, clear, copyButton, h, json, time } from "./dom.js";
import { on, state } from "./store.js";

const ARROWS = { out: "→", in: "←" };

function summary(entry) {
  const http = entry.http || {};
  const error = entry.kind === "error" ? entry.message?.error?.code : null;
  const what = entry.kind === "http" ? `${http.method || "HTTP"} ${http.url || ""}`
    : entry.method || (entry.kind === "error" ? "error" : "response");
  return [
    h("span", { class: "at" }, time(entry.at)),
    h("span", { class: `arrow ${entry.dir}` }, ARROWS[entry.dir] || ""),
    h("span", { class: "method" }, what),
    entry.id !== null && entry.id !== undefined ? h("span", { class: "id" }, `#${entry.id}`) : null,
    entry.kind === "notification" ? badge("notification", "quiet") : null,
    typeof entry.took === "number" ? h("span", { class: "took" }, `${entry.took} ms`) : null,
    http.status ? badge(`HTTP ${http.status}`, http.status >= 400 ? "bad" : "quiet") : null,
    error !== null && error !== undefined ? badge(String(error), "bad") : null,
  ];
}

function headerTable(headers) {
  return h("table", { class: "headers" }, Object.entries(headers || {}).map(([name, value]) =>
    h("tr", { class: name.startsWith("mcp-") ? "mirrored" : "" },
      h("th", {}, name), h("td", {}, value))));
}

function detail(entry) {
  const parts = [];
  if (entry.meaning) parts.push(h("p", { class: "meaning" }, entry.meaning));
  if (entry.copy) {
    parts.push(h("div", { class: "copy-line" }, copyButton("Copy as mcpkit", () => entry.copy),
      h("code", { class: "copy-mcpkit" }, entry.copy)));
  }
  const http = entry.http;
  if (http && http.curl) {
    parts.push(h("div", { class: "copy-line" }, copyButton("Copy as curl", () => http.curl),
      h("code", { class: "copy-curl" }, http.curl)));
  }
  if (http) {
    parts.push(h("div", { class: "http" },
      h("p", {}, `${http.method || ""} ${http.url || ""}`, http.status ? ` → ${http.status}` : ""),
      http.headers ? h("div", {}, h("h4", {}, "Request headers"), headerTable(http.headers)) : null,
      http.reply ? h("div", {}, h("h4", {}, "Response headers"), headerTable(http.reply)) : null));
  }
  if (entry.message) parts.push(json(entry.message));
  return h("div", { class: "wire-detail" }, parts);
}

export function wirePane() {
  const filter = h("input", { type: "search", class: "wire-filter",
                              placeholder: "filter: method, id or text" });
  const direction = h("select", { class: "wire-dir", "aria-label": "direction" },
    h("option", { value: "" }, "both ways"), h("option", { value: "out" }, "→ to the server"),
    h("option", { value: "in" }, "← from the server"));
  const kind = h("select", { class: "wire-kind", "aria-label": "kind" },
    ["", "request", "response", "error", "notification", "http"].map((k) =>
      h("option", { value: k }, k || "every kind")));
  const follow = h("input", { type: "checkbox", checked: true, class: "wire-follow" });
  const count = h("span", { class: "wire-count" });
  const list = h("ol", { class: "wire-list" });
  const rows = new Map();

  const matches = (entry) => {
    if (direction.value && entry.dir !== direction.value) return false;
    if (kind.value && entry.kind !== kind.value) return false;
    const text = filter.value.trim().toLowerCase();
    if (!text) return true;
    const haystack = `${entry.method || ""} #${entry.id ?? ""} ${entry.http?.url || ""} ` +
      JSON.stringify(entry.message || "").slice(0, 20000);
    return haystack.toLowerCase().includes(text);
  };
  const counted = () => {
    const shown = [...rows.values()].filter((r) => !r.hidden).length;
    count.textContent = `${shown} of ${state.wire.length} messages`;
  };
  const row = (entry) => {
    const line = h("div", { class: "wire-summary" }, summary(entry));
    const item = h("li", { class: `wire-entry ${entry.kind}`, dataset: {
      n: entry.n, dir: entry.dir, kind: entry.kind, method: entry.method || "" } }, line);
    line.addEventListener("click", () => {
      const open = item.querySelector(".wire-detail");
      if (open) open.remove();
      else item.append(detail(state.wireByN.get(entry.n) || entry));
    });
    item.hidden = !matches(entry);
    return item;
  };
  const add = (entry) => {
    const item = row(entry);
    rows.set(entry.n, item);
    list.append(item);
    while (rows.size > 5000) {
      const [first, old] = rows.entries().next().value;
      rows.delete(first);
      old.remove();
    }
    counted();
    if (follow.checked && !item.hidden) item.scrollIntoView({ block: "nearest" });
  };
  const refilter = () => {
    for (const [n, item] of rows) item.hidden = !matches(state.wireByN.get(n) || {});
    counted();
  };
  for (const control of [filter, direction, kind]) control.addEventListener("input", refilter);
  on("wire", add);
  on("wire.http", (data) => {
    const item = rows.get(data.n);
    const entry = state.wireByN.get(data.n);
    if (!item || !entry) return;
    clear(item.querySelector(".wire-summary"), summary(entry));
    const open = item.querySelector(".wire-detail");
    if (open) open.replaceWith(detail(entry));
  });
  const clearAll = h("button", { type: "button", class: "wire-clear" }, "Clear");
  clearAll.addEventListener("click", () => {
    for (const item of rows.values()) item.remove();
    rows.clear();
    counted();
  });
  return h("aside", { id: "wire", "aria-label": "The wire" },
    h("div", { class: "wire-bar" }, h("h2", {}, "Wire"), filter, direction, kind,
      h("label", { class: "wire-follow-label" }, follow, " follow"), clearAll, count),
    list);
}
