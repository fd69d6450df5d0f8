// The connection: how the era was found (the evidence, step by step), what the server says it
// is and offers, and the controls that change the connection: reconnect, switch era, sign in;
// the roots a server may ask for; the server's log messages and the changes it announced.

import { act } from "./api.js";
import { badge, clear, details, h, json, outLink, section } from "./dom.js";
import { on, state } from "./store.js";

const ERAS = [["auto", "Probe (auto)"], ["modern", "2026-07-28"], ["legacy", "2025-11-25"]];

function failure(error) {
  return h("p", { class: "problem" }, error.message || String(error));
}

export function headerBar() {
  const summary = h("span", { class: "summary" }, "connecting…");
  const reconnect = h("button", { type: "button", class: "reconnect" }, "Reconnect");
  const status = h("span", { class: "stream-state" });
  reconnect.addEventListener("click", () => act("connect").catch(() => {}));
  const bar = h("header", { id: "bar" }, h("h1", {}, "mcpkit dev"), summary, reconnect, status);
  on("connection", (c) => {
    const name = c.serverInfo ? `${c.serverInfo.name} ${c.serverInfo.version || ""}`.trim() : c.target;
    clear(summary, h("code", {}, c.target), " ",
      c.state === "connected" ? [badge(c.era, `era-${c.era}`), " ", badge(c.version), " ",
                                 h("span", {}, name), " ", badge(c.transport, "quiet")]
        : badge(c.state, c.state === "failed" ? "bad" : "quiet"));
    bar.dataset.state = c.state;
  });
  bar.setStream = (open) => { status.textContent = open ? "" : "reconnecting to the inspector…"; };
  return bar;
}

export function connectionPanel() {
  const about = h("div", { class: "connection-about" });
  const listening = h("div", { class: "connection-listening" });
  const logs = section("Server messages", h("ol", { class: "logs" }));
  const panel = h("div", { class: "panel", id: "panel-connection" }, about, rootsEditor(),
                  listening, logs, stderrBox());
  const render = () => {
    const c = state.connection;
    if (!c) return;
    const eraChoice = h("div", { class: "era-choice" }, ERAS.map(([value, text]) => h("button", {
      type: "button", class: value === c.eraChoice ? "chosen" : "",
      dataset: { era: value },
      onclick: () => act("connect", { era: value }).catch(() => {}),
    }, text)));
    const evidence = h("ol", { class: "evidence" }, (c.evidence || []).map((step) =>
      h("li", {}, h("code", {}, step.sent), " → ", h("span", {}, step.answer))));
    const parts = [
      section("Connection",
        h("dl", {},
          h("dt", {}, "Target"), h("dd", {}, h("code", {}, c.target)),
          c.server !== c.target ? [h("dt", {}, "Reached at"), h("dd", {}, h("code", {}, c.server))]
            : null,
          h("dt", {}, "Transport"), h("dd", {}, c.transport),
          h("dt", {}, "State"), h("dd", { class: "state" }, c.state),
          c.era ? [h("dt", {}, "Era"), h("dd", { class: "era" }, c.era),
                   h("dt", {}, "Version"), h("dd", { class: "version" }, c.version)] : null,
          c.supportedVersions && c.supportedVersions.length ? [
            h("dt", {}, "Versions the server lists"),
            h("dd", {}, c.supportedVersions.join(", "))] : null,
          c.reload ? [h("dt", {}, "Reloads"), h("dd", {}, String(c.reload))] : null),
        c.error ? h("p", { class: "problem connection-error" }, c.error) : null,
        h("h4", {}, "How the era was found"), evidence,
        h("h4", {}, "Era"), eraChoice,
        h("p", { class: "note" }, "Probe asks server/discover first and falls back to initialize; " +
          "a pinned era speaks it from the first message."),
        c.signIn ? signIn(c) : null),
    ];
    if (c.state === "connected") {
      parts.push(section("Server",
        c.serverInfo ? json(c.serverInfo) : h("p", {}, "The server did not say who it is."),
        h("h4", {}, "Instructions"),
        c.instructions ? h("pre", { class: "instructions" }, c.instructions) : h("p", {}, "None."),
        h("h4", {}, "Capabilities"), json(c.capabilities),
        h("h4", {}, "Extensions offered"),
        Object.keys(c.extensions || {}).length
          ? h("ul", { class: "extensions" }, Object.entries(c.extensions).map(([id, settings]) =>
              h("li", {}, h("code", {}, id), " ", h("code", { class: "quiet" }, JSON.stringify(settings)))))
          : h("p", {}, "None."),
        details("What this client declares", json(c.declared))));
    }
    clear(about, parts);
  };
  on("connection", render);
  on("signin", render);
  on("listening", () => clear(listening, listeningBox()));
  for (const kind of ["log", "changed", "asked", "reload"]) on(kind, () => renderLogs(logs));
  return panel;
}

function signIn(c) {
  const s = state.signin;
  const button = h("button", { type: "button", class: "signin" }, "Sign in (OAuth)");
  const said = h("div", { class: "signin-state" });
  button.addEventListener("click", () => act("signin").catch((e) => clear(said, failure(e))));
  if (s && s.state === "open") {
    clear(said, h("p", {}, "Open the authorization server's page to sign in; the inspector " +
      "reconnects when it comes back: "), outLink(s.url, "signin-url"));
  } else if (s) {
    clear(said, h("p", {}, `Sign-in: ${s.state}${s.error ? `: ${s.error}` : ""}`));
  }
  return h("div", { class: "signin-box" }, h("h4", {}, "Authorization"),
    c.authNeeded ? h("p", { class: "problem" }, "The server asks for authorization.") : null,
    h("p", { class: "note" }, "Signs in as mcpkit login does; the tokens are kept for the " +
      "other mcpkit commands too."), button, said);
}

function rootsEditor() {
  const area = h("textarea", { class: "roots", rows: 3, placeholder: "file:///path/to/project" });
  area.value = (state.roots || []).map((r) => r.uri).join("\n");
  const said = h("span", { class: "note" });
  const save = h("button", { type: "button" }, "Set roots");
  save.addEventListener("click", async () => {
    const roots = area.value.split("\n").map((l) => l.trim()).filter(Boolean).map((uri) => ({ uri }));
    try {
      state.roots = (await act("roots", { roots })).roots;
      said.textContent = ` ${state.roots.length} root(s) will answer roots/list`;
    } catch (error) {
      said.textContent = ` ${error.message}`;
    }
  });
  return section("Roots", h("p", { class: "note" }, "What the inspector answers when the server " +
    "asks roots/list (one file:// URI a line)."), area, save, said);
}

function listeningBox() {
  const l = state.listening;
  return section("Listening",
    !l ? h("p", {}, "Not listening yet.")
      : l.error ? h("p", { class: "problem" }, l.error)
      : h("div", {}, h("p", {}, "The server agreed to send:"), json(l.acknowledged)));
}

function renderLogs(panel) {
  const list = panel.querySelector(".logs");
  if (!list) return;
  const items = [
    ...state.logs.map((l) => ({ kind: "log", text: `[${l.level}${l.logger ? ` ${l.logger}` : ""}] ` +
      (typeof l.data === "string" ? l.data : JSON.stringify(l.data)) })),
    ...state.changes.map((c) => ({ kind: c.type, text: c.type === "reload" ? `${c.file} changed: restarted`
      : `${c.method}${c.params ? ` ${JSON.stringify(c.params)}` : ""}${c.answered ? ` answered ${JSON.stringify(c.answered)}` : ""}` })),
  ].slice(-200);
  clear(list, items.map((i) => h("li", { class: i.kind }, i.text)));
}

function stderrBox() {
  const shown = h("pre", { class: "stderr" });
  const look = h("button", { type: "button", class: "show-stderr" }, "Show it");
  look.addEventListener("click", async () => {
    try {
      const { stderr } = await act("stderr");
      shown.textContent = stderr === null ? "Not a stdio server: its output is where it runs."
        : stderr || "(nothing yet)";
    } catch (error) {
      shown.textContent = error.message;
    }
  });
  return section("Server stderr", h("p", { class: "note" }, "What a stdio server wrote on " +
    "stderr lately (a failing tool's traceback is logged there under its error id)."), look, shown);
}
