// Content as a host shows it: a tool result's or a prompt message's content blocks (text,
// images, audio, embedded resources, resource links), and a resource's contents in the viewer
// its MIME type calls for. Everything a server sent is written as text; images and audio are
// shown only from the data the server sent (data: URLs), never fetched from elsewhere.

import { h, json } from "./dom.js";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function dataUrl(mime, data) {
  if (typeof mime !== "string" || typeof data !== "string" || !BASE64.test(data)) return null;
  if (!/^[\w.+-]+\/[\w.+-]+$/.test(mime)) return null;
  return `data:${mime};base64,${data}`;
}

function bytes(base64) {
  return typeof base64 === "string" ? Math.floor((base64.length * 3) / 4) : 0;
}

function parseJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return null;
  }
}

function media(kind, mime, data) {
  const url = dataUrl(mime, data);
  if (!url) return h("p", { class: "problem" }, `${kind} content that is not base64 of a MIME type`);
  if (kind === "image") return h("img", { src: url, alt: `image (${mime})`, class: "image" });
  return h(kind, { src: url, controls: true });
}

// One resource's contents ({uri, mimeType, text | blob}), in the viewer of its MIME type.
export function contents(item, { onRender } = {}) {
  const mime = String(item.mimeType || "");
  const base = mime.split(";")[0].trim().toLowerCase();
  const head = h("div", { class: "contents-head" },
    h("code", {}, item.uri || ""), mime ? h("span", { class: "mime" }, ` ${mime}`) : null);
  let body;
  if (typeof item.text === "string") {
    const text = item.text;
    if (base === "application/json" || base.endsWith("+json")) {
      const parsed = parseJson(text);
      body = parsed ? json(parsed.value, "json viewer-json") : h("pre", { class: "text" }, text);
    } else if (mime.includes("profile=mcp-app")) {
      body = h("div", {}, h("p", {}, "An MCP App view."),
        onRender ? h("button", { type: "button", onclick: () => onRender(item) }, "Render it") : null,
        h("details", {}, h("summary", {}, "Source"), h("pre", { class: "text" }, text)));
    } else if (base === "text/html") {
      const preview = h("iframe", { sandbox: "", class: "html-preview", title: "HTML preview" });
      preview.srcdoc = text;
      body = h("div", {}, preview,
        h("details", {}, h("summary", {}, "Source"), h("pre", { class: "text" }, text)));
    } else {
      body = h("pre", { class: "text viewer-text" }, text);
    }
  } else if (typeof item.blob === "string") {
    if (base.startsWith("image/")) body = media("image", base, item.blob);
    else if (base.startsWith("audio/")) body = media("audio", base, item.blob);
    else if (base.startsWith("video/")) body = media("video", base, item.blob);
    else body = h("p", {}, `binary contents, ${bytes(item.blob)} bytes`);
  } else {
    body = json(item);
  }
  return h("div", { class: "contents", dataset: { mime: base, uri: item.uri || "" } }, head, body);
}

// A list of content blocks; `onLink(uri)` reads a resource link when asked.
export function blocks(list, { onLink } = {}) {
  if (!Array.isArray(list)) return [h("p", { class: "problem" }, "content is not a list")];
  return list.map((block) => {
    const type = block && block.type;
    let shown;
    if (type === "text") shown = h("pre", { class: "text" }, String(block.text ?? ""));
    else if (type === "image" || type === "audio") shown = media(type, block.mimeType, block.data);
    else if (type === "resource" && block.resource) shown = contents(block.resource);
    else if (type === "resource_link") {
      shown = h("div", { class: "link" },
        h("span", {}, block.name || block.title || "resource"), " ", h("code", {}, block.uri || ""),
        block.mimeType ? h("span", { class: "mime" }, ` ${block.mimeType}`) : null,
        onLink && block.uri ? h("button", { type: "button", onclick: () => onLink(block.uri) },
                                "Read") : null,
        block.description ? h("p", { class: "description" }, block.description) : null);
    } else shown = json(block);
    return h("div", { class: `block block-${type || "unknown"}` },
      h("span", { class: "block-type" }, type || "unknown"), shown);
  });
}

// An icon the server named: shown when it is data the server sent, listed otherwise (the page
// loads nothing from another host).
export function icon(icons) {
  if (!Array.isArray(icons) || icons.length === 0) return null;
  const found = icons.find((i) => i && typeof i.src === "string" && i.src.startsWith("data:image/"));
  if (found) return h("img", { class: "icon", src: found.src, alt: "" });
  const first = icons.find((i) => i && typeof i.src === "string");
  return first ? h("span", { class: "icon-far", title: `icon at ${first.src}, not loaded: the ` +
                             "inspector loads nothing from another host" }, "◌") : null;
}
