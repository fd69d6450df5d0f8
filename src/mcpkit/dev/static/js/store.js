// What the page knows, built from the event stream alone, and who wants to hear of changes.

export const state = {
  connection: null,
  catalogue: null,
  listening: null,
  signin: null,
  tasks: new Map(),
  questions: new Map(),
  wire: [],
  wireByN: new Map(),
  logs: [],
  changes: [],
  progress: new Map(),
};

const KEEP = 5000;
const listeners = new Map();

// Hear every `type` event; returns the function that stops hearing them.
export function on(type, listener) {
  if (!listeners.has(type)) listeners.set(type, new Set());
  listeners.get(type).add(listener);
  return () => listeners.get(type).delete(listener);
}

function emit(type, data) {
  for (const listener of listeners.get(type) || []) {
    try {
      listener(data);
    } catch (error) {
      console.error(`the page failed to show a ${type} event`, error);
    }
  }
}

function bounded(list, item) {
  list.push(item);
  if (list.length > KEEP) list.splice(0, list.length - KEEP);
}

export function apply(event) {
  const data = event.data;
  switch (event.type) {
    case "connection": state.connection = data; break;
    case "catalogue": state.catalogue = data; break;
    case "listening": state.listening = data; break;
    case "signin": state.signin = data; break;
    case "task": state.tasks.set(data.id, data); break;
    case "question": state.questions.set(data.id, data); break;
    case "question.closed": state.questions.delete(data.id); break;
    case "wire":
      bounded(state.wire, data);
      state.wireByN.set(data.n, data);
      if (state.wireByN.size > KEEP) state.wireByN.delete(state.wireByN.keys().next().value);
      break;
    case "wire.http": {
      const entry = state.wireByN.get(data.n);
      if (entry) entry.http = { ...(entry.http || {}), ...data.http };
      break;
    }
    case "log": bounded(state.logs, data); break;
    case "changed": case "asked": case "reload": bounded(state.changes, { type: event.type, ...data }); break;
    case "progress": state.progress.set(data.call, data); break;
    default: break;
  }
  emit(event.type, data);
  emit("*", event);
}
