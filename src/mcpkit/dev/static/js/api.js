// The page's two ways to the inspector: actions (a JSON POST each, under api/) and the event
// stream (events). Every address is relative, so each request carries the run's token in its
// path; nothing else is ever requested.

export class ActionError extends Error {
  constructor(answer) {
    super(answer.error || "the action failed");
    this.answer = answer;
  }
}

export async function act(name, params = {}) {
  const response = await fetch(`api/${name}`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
  });
  const text = await response.text();
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = { ok: false, error: `HTTP ${response.status}: ${text}` };
  }
  if (!answer.ok) throw new ActionError(answer);
  return answer;
}

export function follow(onEvent, onState) {
  const source = new EventSource("events");
  source.addEventListener("message", (event) => onEvent(JSON.parse(event.data)));
  source.addEventListener("open", () => onState(true));
  source.addEventListener("error", () => onState(false));
  return source;
}

let counter = 0;
export const newId = (prefix) => `${prefix}${++counter}`;
