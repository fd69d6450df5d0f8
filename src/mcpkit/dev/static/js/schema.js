// JSON Schema as the call forms need it: references resolved, a field's kind read, and a value
// checked as the user types (the keywords tool and elicitation schemas use). The server checks
// again; these messages only say early what it would refuse.

const FORMATS = {
  "date": /^\d{4}-\d{2}-\d{2}$/,
  "date-time": /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/,
  "time": /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?$/,
  "email": /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  "uri": /^[A-Za-z][A-Za-z0-9+.-]*:\S*$/,
  "uuid": /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  "ipv4": /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/,
};
const EXAMPLES = { "date": "2031-03-04", "date-time": "2031-03-04T09:30:00Z", "time": "09:30:00",
                   "email": "ada@example.com", "uri": "https://example.com",
                   "uuid": "123e4567-e89b-12d3-a456-426614174000" };

export function formatExample(format) { return EXAMPLES[format] || ""; }

function pointer(root, ref) {
  if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
  let here = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (here === null || typeof here !== "object" || !(part in here)) return undefined;
    here = here[part];
  }
  return here;
}

// The schema a `$ref` names, followed to the end (a cycle or a dangling reference: {}).
export function resolve(schema, root) {
  const seen = new Set();
  while (schema && typeof schema === "object" && typeof schema.$ref === "string") {
    if (seen.has(schema.$ref)) return {};
    seen.add(schema.$ref);
    const { $ref, ...rest } = schema;
    const target = pointer(root, $ref);
    if (target === undefined) return {};
    schema = Object.keys(rest).length ? { ...target, ...rest } : target;
  }
  return schema === true || !schema ? {} : schema;
}

const isNull = (s, root) => {
  const r = resolve(s, root);
  return r.type === "null" || (Array.isArray(r.type) && r.type.length === 1 && r.type[0] === "null");
};

// {inner, nullable}: `X | None` (anyOf/oneOf with one null branch, or type [X, "null"]) read
// as the field X that may be left empty.
export function unwrap(schema, root) {
  schema = resolve(schema, root);
  for (const key of ["anyOf", "oneOf"]) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.some((b) => isNull(b, root))) {
      const rest = branches.filter((b) => !isNull(b, root));
      if (rest.length === 1) {
        const { [key]: _, ...outer } = schema;
        return { inner: { ...resolve(rest[0], root), ...outer }, nullable: true };
      }
    }
  }
  if (Array.isArray(schema.type) && schema.type.includes("null")) {
    const types = schema.type.filter((t) => t !== "null");
    if (types.length === 1) return { inner: { ...schema, type: types[0] }, nullable: true };
  }
  return { inner: schema, nullable: false };
}

export function kindOf(schema) {
  if (Array.isArray(schema.enum)) return "enum";
  if ("const" in schema) return "const";
  const type = Array.isArray(schema.type) ? (schema.type.length === 1 ? schema.type[0] : null)
                                          : schema.type;
  if (!type && schema.properties) return "object";
  if (!type && schema.items) return "array";
  if (["string", "integer", "number", "boolean", "object", "array", "null"].includes(type)) {
    if (type === "array" && Array.isArray(schema.prefixItems)) return "json";
    if (type === "object" && !schema.properties && schema.additionalProperties !== false) {
      return "json";
    }
    return type;
  }
  return "json";
}

export function typeHint(schema, root) {
  const { inner, nullable } = unwrap(schema, root);
  let hint = Array.isArray(inner.enum) ? "one of " + inner.enum.map((v) => JSON.stringify(v)).join(", ")
    : Array.isArray(inner.type) ? inner.type.join(" | ") : (inner.type || kindOf(inner));
  if (inner.format) hint += ` · ${inner.format}`;
  if (inner.type === "array" && inner.items) {
    const item = resolve(inner.items, root);
    hint = `list of ${item.title || item.type || "values"}`;
  }
  return nullable ? `${hint} or null` : hint;
}

const typeOfValue = (v) => v === null ? "null" : Array.isArray(v) ? "array"
  : Number.isInteger(v) ? "integer" : typeof v;

function fitsType(type, value) {
  const found = typeOfValue(value);
  if (type === "number") return found === "integer" || (found === "number" && Number.isFinite(value));
  return found === type;
}

function equal(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

const join = (path, part) => `${path}/${String(part).replace(/~/g, "~0").replace(/\//g, "~1")}`;

// Every problem of `value` against `schema`: [{path, message}], `path` a JSON pointer.
export function validate(schema, value, root = schema, path = "", depth = 0) {
  if (depth > 64) return [];
  schema = resolve(schema, root);
  if (schema === false) return [{ path, message: "no value is allowed here" }];
  const errors = [];
  const say = (message, at = path) => errors.push({ path: at, message });
  for (const key of ["anyOf", "oneOf"]) {
    if (!Array.isArray(schema[key])) continue;
    const fitting = schema[key].filter((b) => validate(b, value, root, path, depth + 1).length === 0);
    if (fitting.length === 0) {
      const branches = schema[key].map((b) => resolve(b, root));
      if (branches.length === 2 && branches.some((b) => b.type === "null")) {
        const other = branches.find((b) => b.type !== "null");
        return validate(other, value, root, path, depth + 1);
      }
      say("matches none of the shapes this field takes");
    } else if (key === "oneOf" && fitting.length > 1) {
      say("matches more than one of the shapes this field takes");
    }
  }
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) errors.push(...validate(part, value, root, path, depth + 1));
  }
  if ("const" in schema && !equal(schema.const, value)) {
    say(`must be ${JSON.stringify(schema.const)}`);
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => equal(v, value))) {
    say(`must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  const types = schema.type === undefined ? null : [].concat(schema.type);
  if (types && !types.some((t) => fitsType(t, value))) {
    say(`must be ${types.join(" or ")}, not ${typeOfValue(value)}`);
    return errors;
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) {
      say(schema.minLength === 1 ? "must not be empty" : `at least ${schema.minLength} characters`);
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
      say(`at most ${schema.maxLength} characters`);
    }
    if (typeof schema.pattern === "string") {
      try {
        if (!new RegExp(schema.pattern, "u").test(value)) say(`must match ${schema.pattern}`);
      } catch { /* a pattern JavaScript cannot read: the server judges */ }
    }
    const format = FORMATS[schema.format];
    if (format && !format.test(value)) {
      say(`must be a ${schema.format}, e.g. ${EXAMPLES[schema.format] || ""}`.trim());
    }
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) say(`at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) say(`at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
      say(`more than ${schema.exclusiveMinimum}`);
    }
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
      say(`less than ${schema.exclusiveMaximum}`);
    }
    if (typeof schema.multipleOf === "number" && schema.multipleOf > 0 &&
        Math.abs(value / schema.multipleOf - Math.round(value / schema.multipleOf)) > 1e-9) {
      say(`a multiple of ${schema.multipleOf}`);
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
      say(`at least ${schema.minItems} items`);
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
      say(`at most ${schema.maxItems} items`);
    }
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) {
      say("items must differ from each other");
    }
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, i) => {
      const itemSchema = i < prefix.length ? prefix[i] : schema.items;
      if (itemSchema !== undefined) {
        errors.push(...validate(itemSchema, item, root, join(path, i), depth + 1));
      }
    });
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const properties = schema.properties || {};
    for (const name of schema.required || []) {
      if (!(name in value)) say("is required", join(path, name));
    }
    for (const [name, item] of Object.entries(value)) {
      if (name in properties) {
        errors.push(...validate(properties[name], item, root, join(path, name), depth + 1));
      } else if (schema.additionalProperties === false) {
        say(`${JSON.stringify(name)} is not a parameter here`, join(path, name));
      } else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
        errors.push(...validate(schema.additionalProperties, item, root, join(path, name),
                                depth + 1));
      }
    }
  }
  return errors;
}
