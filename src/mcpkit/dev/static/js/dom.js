// Building the page: elements made with text only (never markup from a server), and the few
// shared widgets (a JSON block, a copy button, a badge).

export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") element.className = value;
    else if (key === "text") element.textContent = value;
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") {
      element.addEventListener(key.slice(2), value);
    } else if (key === "value" || key === "checked" || key === "disabled" || key === "selected") {
      element[key] = value;
    } else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

export function clear(element, ...children) {
  element.replaceChildren();
  for (const child of children.flat(Infinity)) {
    if (child !== null && child !== undefined && child !== false) element.append(child);
  }
  return element;
}

export function json(value, cls = "json") {
  return h("pre", { class: cls }, JSON.stringify(value, null, 2));
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}`.trim() }, text);
}

// A button that copies `text()`: the clipboard when the browser allows it, else a selection.
export function copyButton(label, text) {
  const button = h("button", { type: "button", class: "copy" }, label);
  button.addEventListener("click", async () => {
    const value = text();
    let done = false;
    try {
      await navigator.clipboard.writeText(value);
      done = true;
    } catch {
      const area = h("textarea", { class: "offscreen" }, value);
      document.body.append(area);
      area.select();
      done = document.execCommand("copy");
      area.remove();
    }
    const before = button.textContent;
    button.textContent = done ? "Copied" : "Select and copy";
    setTimeout(() => { button.textContent = before; }, 1200);
  });
  return button;
}

export function time(ms) {
  const d = new Date(ms);
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function section(title, ...children) {
  return h("section", { class: "card" }, h("h3", {}, title), ...children);
}

export function details(summary, ...children) {
  return h("details", {}, h("summary", {}, summary), ...children);
}

// A link to an address a server (or a view) named, opened only by the user, in a new tab that
// knows nothing of this page; anything but http(s) is shown as text, never made a link.
export function outLink(url, cls = "") {
  let ok = false;
  try {
    ok = ["http:", "https:"].includes(new URL(url).protocol);
  } catch { /* not a URL */ }
  if (!ok) return h("code", { class: cls }, String(url));
  return h("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: cls }, url);
}
