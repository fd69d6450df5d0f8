// A form generated from a JSON Schema: the call form of a tool (its inputSchema) and the form of
// a question (an elicitation's requestedSchema). Nested objects and lists, enums, formats,
// defaults, required marks; the value is checked as it is typed, each problem shown at its
// field; a raw-JSON mode edits the same value as text.

import { h, clear } from "./dom.js";
import { formatExample, kindOf, resolve, typeHint, unwrap, validate } from "./schema.js";

const join = (path, part) => `${path}/${String(part).replace(/~/g, "~0").replace(/\//g, "~1")}`;

function label(meta, schema, root) {
  const title = schema.title && schema.title !== meta.name ? ` (${schema.title})` : "";
  return h("label", { class: "label" },
    h("span", { class: "name" }, meta.name ?? "value"), title,
    meta.required ? h("span", { class: "required", title: "required" }, " *") : null,
    h("span", { class: "hint" }, ` ${typeHint(meta.schema, root)}`));
}

function about(schema) {
  const parts = [];
  if (schema.description) parts.push(h("span", { class: "description" }, schema.description));
  if (schema.default !== undefined) {
    parts.push(h("span", { class: "default" }, ` default ${JSON.stringify(schema.default)}`));
  }
  return parts.length ? h("div", { class: "about" }, parts) : null;
}

function wrap(meta, schema, root, control, extra = []) {
  return h("div", { class: `field kind-${meta.kind}`, dataset: { path: meta.path } },
    label(meta, schema, root), control, about(schema), ...extra,
    h("p", { class: "problem", role: "alert" }));
}

function emptyValue(meta) {
  return meta.nullable && meta.required ? null : undefined;
}

function stringField(meta, schema, root) {
  const long = (schema.maxLength ?? 0) > 160 || schema.format === "textarea";
  const input = long ? h("textarea", { rows: 3, name: meta.path })
    : h("input", { type: schema.format === "date" ? "date" : "text", name: meta.path,
                   placeholder: formatExample(schema.format) || "" });
  const field = {
    element: wrap(meta, schema, root, input),
    get: () => (input.value === "" ? emptyValue(meta) : input.value),
    set: (value) => { input.value = typeof value === "string" ? value : ""; },
  };
  return field;
}

function numberField(meta, schema, root) {
  const input = h("input", { type: "number", name: meta.path,
                             step: meta.kind === "integer" ? "1" : "any" });
  return {
    element: wrap(meta, schema, root, input),
    get: () => {
      if (input.value === "") return input.validity.badInput ? "(not a number)" : emptyValue(meta);
      return Number(input.value);
    },
    set: (value) => { input.value = typeof value === "number" ? String(value) : ""; },
  };
}

function booleanField(meta, schema, root) {
  if (meta.required || schema.default !== undefined) {
    const box = h("input", { type: "checkbox", name: meta.path });
    return { element: wrap(meta, schema, root, box), get: () => box.checked,
             set: (value) => { box.checked = value === true; } };
  }
  const select = h("select", { name: meta.path },
    h("option", { value: "" }, "(leave out)"), h("option", { value: "true" }, "true"),
    h("option", { value: "false" }, "false"));
  return {
    element: wrap(meta, schema, root, select),
    get: () => (select.value === "" ? emptyValue(meta) : select.value === "true"),
    set: (value) => { select.value = value === true ? "true" : value === false ? "false" : ""; },
  };
}

function enumField(meta, schema, root) {
  const choices = schema.enum;
  const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
  const select = h("select", { name: meta.path },
    h("option", { value: "" }, meta.required ? "(choose)" : "(leave out)"),
    choices.map((choice, i) => h("option", { value: String(i) },
      names[i] ? `${names[i]} (${JSON.stringify(choice)})`
        : typeof choice === "string" ? choice : JSON.stringify(choice))));
  return {
    element: wrap(meta, schema, root, select),
    get: () => (select.value === "" ? emptyValue(meta) : choices[Number(select.value)]),
    set: (value) => {
      const i = choices.findIndex((c) => JSON.stringify(c) === JSON.stringify(value));
      select.value = i < 0 ? "" : String(i);
    },
  };
}

function constField(meta, schema, root) {
  return { element: wrap(meta, schema, root, h("code", {}, JSON.stringify(schema.const))),
           get: () => schema.const, set: () => {} };
}

function jsonField(meta, schema, root) {
  const area = h("textarea", { rows: 3, name: meta.path, class: "json-input",
                               placeholder: "JSON" });
  return {
    element: wrap(meta, schema, root, area),
    get: () => {
      if (area.value.trim() === "") return emptyValue(meta);
      try {
        return JSON.parse(area.value);
      } catch {
        return area.value;  // the schema check then says what type it expected
      }
    },
    set: (value) => { area.value = value === undefined ? "" : JSON.stringify(value, null, 2); },
    local: () => {
      if (area.value.trim() === "") return null;
      try {
        JSON.parse(area.value);
        return null;
      } catch (error) {
        return `not JSON: ${error.message}`;
      }
    },
  };
}

function objectField(meta, schema, root, depth) {
  const properties = schema.properties || {};
  const required = new Set(schema.required || []);
  const children = Object.entries(properties).map(([name, child]) =>
    [name, field(child, root, { name, path: join(meta.path, name), required: required.has(name) },
                 depth + 1)]);
  const box = h("div", { class: "object" }, children.map(([, child]) => child.element));
  const element = meta.top ? box
    : h("fieldset", { class: "field kind-object", dataset: { path: meta.path } },
        h("legend", {}, label(meta, schema, root)), about(schema), box,
        h("p", { class: "problem", role: "alert" }));
  return {
    element,
    get: () => {
      const out = {};
      for (const [name, child] of children) {
        const value = child.get();
        if (value !== undefined) out[name] = value;
      }
      if (!meta.top && !meta.required && Object.keys(out).length === 0) return emptyValue(meta);
      return out;
    },
    set: (value) => {
      for (const [name, child] of children) child.set(value && typeof value === "object" ? value[name] : undefined);
    },
    children: () => children.map(([, child]) => child),
  };
}

function arrayField(meta, schema, root, depth) {
  const itemSchema = schema.items || {};
  const list = h("ol", { class: "items" });
  const items = [];
  const add = (value) => {
    const item = field(itemSchema, root, { name: `item ${items.length + 1}`,
                                           path: join(meta.path, items.length), required: true },
                       depth + 1);
    if (value !== undefined) item.set(value);
    const remove = h("button", { type: "button", class: "remove" }, "Remove");
    const row = h("li", {}, item.element, remove);
    remove.addEventListener("click", () => {
      const at = items.indexOf(item);
      items.splice(at, 1);
      row.remove();
      row.dispatchEvent(new Event("input", { bubbles: true }));
      list.dispatchEvent(new Event("input", { bubbles: true }));
    });
    items.push(item);
    list.append(row);
  };
  const more = h("button", { type: "button", class: "add" }, "Add item");
  more.addEventListener("click", () => {
    add(undefined);
    more.dispatchEvent(new Event("input", { bubbles: true }));
  });
  const element = h("fieldset", { class: "field kind-array", dataset: { path: meta.path } },
    h("legend", {}, label(meta, schema, root)), about(schema), list, more,
    h("p", { class: "problem", role: "alert" }));
  return {
    element,
    get: () => {
      const values = items.map((item) => item.get()).filter((v) => v !== undefined);
      if (values.length === 0 && !meta.required) return emptyValue(meta);
      return values;
    },
    set: (value) => {
      items.splice(0);
      clear(list);
      if (Array.isArray(value)) value.forEach((v) => add(v));
    },
    children: () => items,
  };
}

const BUILDERS = { string: stringField, integer: numberField, number: numberField,
                   boolean: booleanField, enum: enumField, const: constField, json: jsonField,
                   null: constField };

function field(schema, root, meta, depth = 0) {
  const { inner, nullable } = unwrap(schema, root);
  const resolved = resolve(inner, root);
  const kind = depth > 12 ? "json" : kindOf(resolved);
  const full = { ...meta, schema, nullable, kind };
  let built;
  if (kind === "object") built = objectField(full, resolved, root, depth);
  else if (kind === "array") built = arrayField(full, resolved, root, depth);
  else built = BUILDERS[kind](full, kind === "null" ? { ...resolved, const: null } : resolved, root);
  if (resolved.default !== undefined) built.set(resolved.default);
  built.path = meta.path;
  return built;
}

function everyField(top) {
  const out = [];
  const walk = (f) => {
    out.push(f);
    if (f.children) f.children().forEach(walk);
  };
  walk(top);
  return out;
}

// The form of `schema` (an object schema). `value()` is what it holds now (raw JSON when in
// that mode; throws on JSON that does not parse), `problems()` what the schema refuses in it.
export function schemaForm(schema, { raw: startRaw = false } = {}) {
  const root = schema && typeof schema === "object" ? schema : { type: "object" };
  const top = field({ type: "object", ...root }, root, { name: "arguments", path: "",
                                                         required: true, top: true });
  const rawArea = h("textarea", { class: "raw", rows: 8, spellcheck: "false",
                                  "aria-label": "the value as JSON" });
  const formBox = h("div", { class: "form-fields" }, top.element);
  const rawBox = h("div", { class: "raw-box", hidden: true }, rawArea);
  const listed = h("ul", { class: "problems" });
  const toggle = h("button", { type: "button", class: "mode" }, "Raw JSON");
  const element = h("div", { class: "schema-form" }, toggle, formBox, rawBox, listed);
  const touched = new Set();
  let rawMode = false;
  let showAll = false;

  const current = () => {
    if (!rawMode) return top.get() ?? {};
    return JSON.parse(rawArea.value.trim() || "{}");
  };
  const problems = () => {
    let value;
    try {
      value = current();
    } catch (error) {
      return [{ path: "", message: `not JSON: ${error.message}` }];
    }
    const found = validate(root, value, root);
    if (!rawMode) {
      for (const f of everyField(top)) {
        const local = f.local ? f.local() : null;
        if (local) found.push({ path: f.path, message: local });
      }
    }
    return found;
  };
  const check = () => {
    const found = problems();
    const wrappers = new Map([...element.querySelectorAll("[data-path]")]
      .map((w) => [w.dataset.path, w]));
    for (const wrapper of wrappers.values()) {
      wrapper.querySelector(":scope > .problem").textContent = "";
      wrapper.classList.remove("invalid");
    }
    clear(listed);
    for (const problem of found) {
      const wrapper = rawMode ? null : wrappers.get(problem.path);
      const shown = showAll || rawMode || [...touched].some((t) => problem.path.startsWith(t));
      if (!shown) continue;
      if (wrapper) {
        const line = wrapper.querySelector(":scope > .problem");
        line.textContent = line.textContent ? `${line.textContent}; ${problem.message}`
                                            : problem.message;
        wrapper.classList.add("invalid");
      } else {
        listed.append(h("li", {}, `${problem.path || "the value"}: ${problem.message}`));
      }
    }
    element.dataset.valid = String(found.length === 0);
    return found;
  };
  element.addEventListener("input", (event) => {
    const wrapper = event.target.closest && event.target.closest("[data-path]");
    if (wrapper) touched.add(wrapper.dataset.path);
    check();
  });
  element.addEventListener("change", () => check());
  toggle.addEventListener("click", () => {
    if (!rawMode) {
      rawArea.value = JSON.stringify(top.get() ?? {}, null, 2);
    } else {
      try {
        top.set(JSON.parse(rawArea.value || "{}"));
      } catch (error) {
        clear(listed, h("li", {}, `not JSON, so the form cannot show it: ${error.message}`));
        return;
      }
    }
    rawMode = !rawMode;
    formBox.hidden = rawMode;
    rawBox.hidden = !rawMode;
    toggle.textContent = rawMode ? "Form" : "Raw JSON";
    element.dataset.mode = rawMode ? "raw" : "form";
    check();
  });
  if (startRaw) toggle.click();
  element.dataset.mode = rawMode ? "raw" : "form";
  check();
  return {
    element,
    value: current,
    problems,
    // Every problem shown (a submit): what is still wrong, or [].
    submit: () => {
      showAll = true;
      return check();
    },
    set: (value) => {
      if (rawMode) rawArea.value = JSON.stringify(value, null, 2);
      else top.set(value);
      check();
    },
  };
}
