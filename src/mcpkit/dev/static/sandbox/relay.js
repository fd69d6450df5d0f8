// The sandbox proxy of mcpkit dev's MCP Apps host: this document has an origin of its own (the
// inspector's second port) and the view's Content Security Policy, which the view's document,
// written into the inner frame below, inherits. It relays JSON-RPC messages between the host
// page and the view, and takes only one message for itself: the view's HTML.
"use strict";
(() => {
  const host = document.body.dataset.host;
  const inner = document.createElement("iframe");
  inner.setAttribute("sandbox", "allow-scripts allow-same-origin");
  if (document.body.dataset.allow) inner.setAttribute("allow", document.body.dataset.allow);
  inner.title = "MCP App view";
  document.body.append(inner);
  let written = false;

  window.addEventListener("message", (event) => {
    if (event.source === window.parent) {
      if (event.origin !== host) return;
      const message = event.data;
      if (message && message.method === "ui/notifications/sandbox-resource-ready") {
        const html = message.params && message.params.html;
        if (written || typeof html !== "string") return;
        written = true;
        const page = inner.contentDocument;
        page.open();
        page.write(html);
        page.close();
        return;
      }
      // Only to the view written here: a frame that navigated elsewhere hears nothing.
      if (inner.contentWindow) inner.contentWindow.postMessage(message, window.location.origin);
    } else if (event.source === inner.contentWindow && event.origin === window.location.origin) {
      window.parent.postMessage(event.data, host);
    }
  });

  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready",
                              params: {} }, host);
})();
