// The host side of MCP Apps (SEP-1865) for one view: a sandbox proxy frame on the inspector's
// second origin, the view inside it, and JSON-RPC over postMessage between the view and here.
//
// The proxy frame is served with the view's own Content Security Policy and relays messages
// both ways; it announces itself (ui/notifications/sandbox-proxy-ready) and is handed the
// view's HTML (ui/notifications/sandbox-resource-ready). The view then asks ui/initialize and
// says ui/notifications/initialized; only then does the host send it anything: the tool's
// input, its result when it comes, a cancellation. The view may call the server's tools (those
// whose visibility has "app"; the inspector refuses the others) and read its resources through
// the host, report its size, log, and ask to open a link or post a message, which are shown
// for the user rather than done. Every message either way is listed under the view.

import { act } from "./api.js";
import { h, outLink, time } from "./dom.js";

const PROTOCOL = "2026-01-26";
const MAX_HEIGHT = 4000;

export class AppHost {
  constructor({ view, tool, call, theme }) {
    this.view = view;
    this.tool = tool;
    this.call = call;
    this.theme = theme || "light";
    this.origin = new URL(view.frame).origin;
    this.ready = false;
    this.queue = [];
    this.ids = 1;
    this.pending = new Map();
    this.log = h("ol", { class: "app-log" });
    this.notes = h("div", { class: "app-notes" });
    this.frame = h("iframe", {
      class: "app-frame", title: `MCP App view ${view.uri}`,
      sandbox: "allow-scripts allow-same-origin", allow: view.allow || null, src: view.frame,
    });
    if (view.ui && view.ui.prefersBorder === false) this.frame.classList.add("borderless");
    this.listener = (event) => this.received(event);
    window.addEventListener("message", this.listener);
    this.element = h("div", { class: "app", dataset: { uri: view.uri } },
      h("div", { class: "app-head" }, h("strong", {}, "MCP App "), h("code", {}, view.uri),
        h("span", { class: "app-state" }, " loading")),
      this.frame, this.notes,
      h("details", { class: "app-policy" }, h("summary", {}, "Content Security Policy"),
        h("pre", {}, view.policy)),
      h("details", { class: "app-messages" }, h("summary", {}, "Messages with the view"),
        this.log));
  }

  setState(text) {
    this.element.querySelector(".app-state").textContent = ` ${text}`;
    this.element.dataset.state = text;
  }

  note(direction, message) {
    const what = message.method || (message.error ? `error ${message.error.code}` : "result");
    this.log.append(h("li", { dataset: { dir: direction, method: message.method || "" } },
      `${time(Date.now())} ${direction === "out" ? "→ view" : "← view"} ${what}`,
      h("pre", {}, JSON.stringify(message))));
  }

  post(message) {
    const full = { jsonrpc: "2.0", ...message };
    if (!full.method?.startsWith("ui/notifications/sandbox-")) this.note("out", full);
    this.frame.contentWindow.postMessage(full, this.origin);
  }

  // Host-to-view messages wait for the view's initialized notification (SEP-1865).
  send(message) {
    if (this.ready) this.post(message);
    else this.queue.push(message);
  }

  toolInput(args) {
    this.send({ method: "ui/notifications/tool-input", params: { arguments: args || {} } });
  }

  toolResult(result) {
    this.send({ method: "ui/notifications/tool-result", params: result });
  }

  toolCancelled(reason) {
    this.send({ method: "ui/notifications/tool-cancelled", params: { reason } });
  }

  async teardown() {
    window.removeEventListener("message", this.listener);
    if (this.ready) {
      const id = `host-${this.ids++}`;
      const done = new Promise((resolve) => this.pending.set(id, resolve));
      this.post({ id, method: "ui/resource-teardown", params: {} });
      await Promise.race([done, new Promise((resolve) => setTimeout(resolve, 1000))]);
    }
    this.element.remove();
  }

  answer(id, result) { this.post({ id, result }); }

  fail(id, code, message) { this.post({ id, error: { code, message } }); }

  async received(event) {
    if (event.source !== this.frame.contentWindow || event.origin !== this.origin) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === "ui/notifications/sandbox-proxy-ready") {
      this.post({ method: "ui/notifications/sandbox-resource-ready",
                  params: { html: this.view.html, permissions: this.view.ui?.permissions || {} } });
      this.setState("starting");
      return;
    }
    this.note("in", message);
    if (message.method === undefined) {
      const waiting = this.pending.get(message.id);
      if (waiting) {
        this.pending.delete(message.id);
        waiting(message);
      }
      return;
    }
    const handler = HANDLERS[message.method];
    if (message.id === undefined) {
      if (handler) handler.call(this, message.params || {});
      return;
    }
    if (!handler) {
      this.fail(message.id, -32601, `Method not found: ${message.method}`);
      return;
    }
    try {
      this.answer(message.id, (await handler.call(this, message.params || {})) || {});
    } catch (error) {
      const code = error.answer && typeof error.answer.code === "number" ? error.answer.code : -32603;
      this.fail(message.id, code, error.message);
    }
  }

  context() {
    return {
      theme: this.theme, displayMode: "inline", availableDisplayModes: ["inline"],
      platform: "web", locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      containerDimensions: { maxHeight: MAX_HEIGHT },
      toolInfo: { id: this.call, tool: this.tool },
    };
  }

  shown(kind, text, link) {
    this.notes.append(h("p", { class: `app-note ${kind}` }, text, link ? [" ", outLink(link)] : null));
  }
}

const HANDLERS = {
  "ui/initialize"(params) {
    this.setState("initializing");
    this.appInfo = params.appInfo;
    return {
      protocolVersion: PROTOCOL,
      hostInfo: { name: "mcpkit-dev", version: "1" },
      hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, openLinks: {},
                          message: {}, updateModelContext: {} },
      hostContext: this.context(),
    };
  },
  "ui/notifications/initialized"() {
    this.ready = true;
    this.setState("shown");
    for (const message of this.queue.splice(0)) this.post(message);
  },
  "ui/notifications/size-changed"(params) {
    if (typeof params.height === "number" && params.height > 0) {
      this.frame.style.height = `${Math.min(Math.ceil(params.height), MAX_HEIGHT)}px`;
      this.element.dataset.height = String(Math.ceil(params.height));
    }
  },
  "notifications/message"(params) {
    this.shown("log", `view log (${params.level || "info"}): ${JSON.stringify(params.data)}`);
  },
  async "tools/call"(params) {
    const answer = await act("call", { name: params.name, arguments: params.arguments || {},
                                       from: "app" });
    return answer.result;
  },
  async "resources/read"(params) {
    return (await act("read", { uri: params.uri })).result;
  },
  "ui/open-link"(params) {
    this.shown("link", "The view asks to open a link (open it yourself if you trust it):",
               typeof params.url === "string" ? params.url : "");
    return {};
  },
  "ui/message"(params) {
    this.shown("message", `The view posts a message for the conversation: ${JSON.stringify(params)}`);
    return {};
  },
  "ui/update-model-context"(params) {
    this.shown("context", `The view updates the model's context: ${JSON.stringify(params)}`);
    return {};
  },
  "ui/request-display-mode"() { return { mode: "inline" }; },
  "ping"() { return {}; },
};
