// The playground: one turn per message through the signoff client (/signoff-client.js, built
// from clients/typescript): over the SSE stream, or, where the API has none, the plain route
// followed by long-poll; its pending decisions as dialogs.
// Everything a model or a person wrote goes into the page as text (textContent), never as HTML.
import { Client, SignoffError } from "/signoff-client.js";

const $ = (id) => document.getElementById(id);
let sessionId = null;

// The status route's wait while following a turn (at most 25 s, the route's limit).
const LONG_POLL_WAIT = 20;

// The API's base URL: the field's, or this page's own origin (the local stack's).
function apiBase() {
  return $("base-url").value.trim().replace(/\/+$/, "") || window.location.origin;
}

// The stream URL field's (a deployed stack's stream function, its StreamUrl output), or none:
// the API's own base URL serves the stream (the local stack does).
function streamUrl() {
  return $("stream-url").value.trim().replace(/\/+$/, "") || null;
}

// The page's one client, for the fields as they are now (a new one when they change: its
// memory that an API has no stream belongs to that API).
let client = null;
let clientFor = "";

function api() {
  const apiKey = $("api-key").value.trim() || null;
  const fields = JSON.stringify([apiBase(), streamUrl(), apiKey]);
  if (client === null || fields !== clientFor) {
    client = new Client(apiBase(), { apiKey, streamUrl: streamUrl(), wait: LONG_POLL_WAIT });
    clientFor = fields;
  }
  return client;
}

// What a model wrote, with its hidden characters shown escaped (\u202e): the rule of
// signoff.approver.display.visible, which the link pages, email, Slack and Lark apply. Categories
// Cc, Cf, Cs, Zl, Zp and the blank default-ignorables; newline and tab stay, CRLF as newline.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0]/gu;

function visible(text) {
  return String(text ?? "")
    .replace(/\r\n/g, "\n")
    .replace(HIDDEN, (char) => {
      if (char === "\n" || char === "\t") return char;
      const hex = char.codePointAt(0).toString(16);
      return hex.length <= 4 ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
    });
}

// An error answer as the page shows it: "422 invalid_changes: …"; anything else as it says.
function problem(error) {
  if (error instanceof SignoffError && error.status) {
    return `${error.status} ${error.code || ""}: ${error.detail}`;
  }
  return error instanceof SignoffError ? error.detail : String(error);
}

function say(kind, text) {
  const item = document.createElement("li");
  item.className = kind;
  item.textContent = visible(text);
  $("conversation").append(item);
  item.scrollIntoView({ block: "nearest" });
}

function summary(event) {
  switch (event.type) {
    case "session": return event.sessionId;
    case "budget:check": return `${event.action} (${event.usedTokens}/${event.budgetTokens} tokens)`;
    case "assistant:text": return event.text;
    case "actauth:decision": return `${event.tool} → ${event.decision} (${event.reason})`;
    case "tool:started": return `${event.tool} ${JSON.stringify(event.args)}` +
      (event.originalArgs ? ` (changed from ${JSON.stringify(event.originalArgs)})` : "");
    case "tool:result": return `${event.tool} → ${event.statusText}`;
    case "toollane:result": return `${event.name}: ${event.summary}`;
    case "approval:pending": return `${event.tool} ${JSON.stringify(event.args)} (${event.reason})`;
    case "question:pending": return event.question;
    case "skill:loaded": return event.skill;
    case "loop:skipped": return `${event.name} (denied: ${event.deniedTools.join(", ")})`;
    case "loop:denied": return event.deniedTools.join(", ");
    case "loop:max_turns": return `${event.maxTurns} turns`;
    case "loop:done": return event.text;
    case "done": return event.stopReason ? `${event.text} (${event.stopReason})` : event.text;
    case "error": return event.error;
    default: return "";
  }
}

function showEvent(event) {
  const item = document.createElement("li");
  item.dataset.type = event.type;
  const name = document.createElement("code");
  name.textContent = event.type;
  item.append(name, " ", visible(summary(event)));
  $("events").append(item);
}

function setStatus(text) {
  $("status").textContent = text;
}

function handle(event) {
  showEvent(event);
  switch (event.type) {
    case "session":
      sessionId = event.sessionId;
      $("session").textContent = sessionId;
      break;
    case "assistant:text":
      say("assistant", event.text);
      break;
    case "approval:pending":
      setStatus("waiting for an approval");
      openApproval(event);
      break;
    case "question:pending":
      setStatus("waiting for an answer");
      openQuestion(event);
      break;
    case "done":
      closeDialogs();
      say(event.stopReason ? "stopped" : "final", summary(event));
      setStatus(event.stopReason ? `done (${event.stopReason})` : "done");
      break;
    case "error":
      closeDialogs();
      $("send-error").textContent = event.error;
      setStatus("failed");
      break;
    default:
      if (!$("status").textContent.startsWith("running")) setStatus("running");
  }
}

function closeDialogs() {
  for (const dialog of [$("approval"), $("question")]) if (dialog.open) dialog.close();
}

// Each dialog remembers the item it shows: the stream may bring the next item before the
// decision on this one has been answered.
function openApproval(event) {
  $("approval").dataset.item = event.id;
  $("approval-agent").textContent = visible(event.scope.agent);
  // The summary and the conversation come with the session's pending item (showCard);
  // until then the dialog is headed by the tool's name.
  $("approval-summary").textContent = visible(event.tool);
  $("approval-meta").textContent = "";
  $("approval-expires").textContent = "";
  for (const box of ["approval-request-box", "approval-said-box", "approval-votes-box"]) {
    $(box).hidden = true;
  }
  $("approval-details").open = false;
  $("approval-tool").textContent = visible(event.tool);
  $("approval-args").textContent = visible(JSON.stringify(event.args, null, 2));
  $("approval-reason").textContent = visible(event.reason);
  $("approval-scope").textContent = visible(
    `agent ${event.scope.agent} · tenant ${event.scope.tenant} · ${event.scope.environment}`,
  );
  showCard(event);
  $("approval-error").textContent = "";
  $("approval-note").value = "";
  $("approval-changes").value = JSON.stringify(event.args, null, 2);
  $("approval-changes-box").hidden = true;
  pendingArgs.set(event.id, event.args);
  for (const button of [$("approve"), $("deny")]) button.disabled = false;
  $("approval").showModal();
  offerChanges(event);
}

// "in 23 hours": the largest whole unit, as signoff.approver.card.relative words it.
function relative(seconds) {
  let left = Math.abs(Math.trunc(seconds));
  let unit = "second";
  for (const [size, name] of [[86400, "day"], [3600, "hour"], [60, "minute"]]) {
    if (left >= size) { left = Math.floor(left / size); unit = name; break; }
  }
  const words = `${left} ${unit}${left === 1 ? "" : "s"}`;
  return seconds >= 0 ? `in ${words}` : `${words} ago`;
}

// The rest of the card from the session's pending item: the summary (the tool's own
// template, filled by the engine), the request, the agent's words, the expiry.
async function showCard(event) {
  if (!sessionId) return; // an approval without a session of this page's: nothing to ask
  let pending;
  try {
    pending = (await api().status(event.scope.agent, sessionId)).pending;
  } catch {
    return; // the dialog still shows the call, its reason and its arguments
  }
  if (!pending || pending.id !== event.id || $("approval").dataset.item !== event.id) return;
  if (pending.summary) $("approval-summary").textContent = visible(pending.summary);
  showVotes(pending.approvals);
  for (const [field, box] of [["request", "approval-request"], ["said", "approval-said"]]) {
    $(box).textContent = visible(pending[field] || "");
    $(`${box}-box`).hidden = !pending[field];
  }
  if (pending.expiresAt) {
    const at = new Date(pending.expiresAt);
    const left = relative((at.getTime() - Date.now()) / 1000);
    const utc = `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
    $("approval-expires").textContent = `${left} — ${utc} · ${at.toLocaleString()} your time`;
    $("approval-meta").textContent = visible(
      `${$("approval-scope").textContent} · expires ${left}`,
    );
  }
}

// What each open approval asked for: an approval with changes sends only the fields changed.
const pendingArgs = new Map();

// The change box shows only for a tool declared editable (the agent's config says so).
async function offerChanges(event) {
  try {
    const config = await api().config(event.scope.agent);
    const tool = (config.tools || []).find((candidate) => candidate.name === event.tool);
    if (tool && tool.editable && $("approval").dataset.item === event.id) {
      $("approval-changes-box").hidden = false;
    }
  } catch {
    // without the config the approval is offered as asked
  }
}

// The approve body: {args: the fields changed} when the box is shown and edited, else {}.
function approveBody() {
  const body = {};
  const note = $("approval-note").value.trim();
  if (note) body.note = note;
  if ($("approval-changes-box").hidden) return body;
  let edited;
  try {
    edited = JSON.parse($("approval-changes").value);
  } catch (error) {
    throw new Error(`the changed arguments are not JSON: ${error.message}`);
  }
  if (!edited || typeof edited !== "object" || Array.isArray(edited)) {
    throw new Error("the changed arguments must be a JSON object");
  }
  const asked = pendingArgs.get($("approval").dataset.item) || {};
  const changed = {};
  for (const [name, value] of Object.entries(edited)) {
    if (JSON.stringify(value) !== JSON.stringify(asked[name])) changed[name] = value;
  }
  if (Object.keys(changed).length) body.args = changed;
  return body;
}

function denyBody() {
  const reason = $("approval-note").value.trim();
  return reason ? { reason } : {};
}

function openQuestion(event) {
  $("question").dataset.item = event.id;
  $("question-text").textContent = visible(event.question);
  const options = $("question-options");
  options.replaceChildren();
  options.classList.toggle("none", !(event.options && event.options.length));
  const legend = document.createElement("legend");
  legend.textContent = "Choose one";
  options.append(legend);
  for (const option of event.options || []) {
    const label = document.createElement("label");
    const radio = document.createElement("input");
    radio.type = "radio";
    radio.name = "choice";
    radio.value = option; // the answer is the option as offered; its label shows it escaped
    label.append(radio, visible(option));
    options.append(label);
  }
  $("answer").value = "";
  $("question-error").textContent = "";
  $("question").showModal();
}

// An approval that needs several people: "1 of 2 approvals — alice" (none: hidden).
function showVotes(approvals) {
  $("approval-votes").textContent = approvals ? visible(approvals.line) : "";
  $("approval-votes-box").hidden = !approvals;
}

// The decision goes through the API's own route (the client's approve, deny or answer); the
// open stream (or the long-poll) carries what follows.
async function decide(dialog, deciding, errorField, buttons) {
  const item = dialog.dataset.item;
  for (const button of buttons) button.disabled = true;
  try {
    const reply = await deciding(api(), item);
    // 202 with the item itself: a vote short of its quorum, the turn waits for more
    if (reply && reply.pending && reply.approvals && reply.id === item) {
      showVotes(reply.approvals);
      $(errorField).textContent = "Your vote is recorded; it waits for the other approvals.";
      return; // the buttons stay disabled: a person votes once
    }
    if (dialog.open && dialog.dataset.item === item) dialog.close();
    return;
  } catch (error) {
    // 409: someone decided first (a link, Slack): the stream shows what they chose.
    if (error instanceof SignoffError && error.status === 409) {
      if (dialog.open && dialog.dataset.item === item) dialog.close();
      return;
    }
    $(errorField).textContent = problem(error);
  }
  for (const button of buttons) button.disabled = false;
}

// One turn of the agent: the client picks the transport (SSE; the plain route and long-poll
// where the API has no stream, or the stream URL cannot be reached; a dropped stream resumed
// by long-poll) and yields the same events either way, session first, done (or error) last.
async function send(event) {
  event.preventDefault();
  const agent = $("agent").value;
  const message = $("message").value.trim();
  if (!agent || !message) return;
  $("send-error").textContent = "";
  $("send").disabled = true;
  say("user", message);
  setStatus("running");
  const turn = api().send(agent, message, sessionId ? { sessionId } : {});
  let started = false;
  try {
    for await (const loopEvent of turn) {
      started = true;
      handle(loopEvent);
    }
  } catch (error) {
    // Refused before the turn started (a bad key, a busy session), or the API is gone.
    $("send-error").textContent = started ? `the turn broke off: ${problem(error)}` : problem(error);
    setStatus(started ? "disconnected" : "refused");
  } finally {
    $("send").disabled = false;
  }
}

async function loadAgents() {
  let agents;
  try {
    agents = await api().agents();
  } catch (error) {
    // Unreachable, or another origin whose API allows no CORS request from this page; or
    // its error answer.
    $("send-error").textContent = error instanceof SignoffError && error.status
      ? `listing the agents: ${problem(error)}`
      : `listing the agents at ${apiBase()}: ${problem(error)}`;
    return;
  }
  // What is wrong with a misconfigured agent: the local stack says it (the API only marks it).
  // A healthy agent's rule warnings (a rule for a tool it lacks) show; Send stays on.
  let problems = {};
  let warnings = {};
  if (apiBase() === window.location.origin) {
    // The local stack's own route: only this page's origin has it.
    const local = await fetch("/_local/agents");
    if (local.ok) ({ problems, warnings = {} } = await local.json());
  }
  const select = $("agent");
  select.replaceChildren();
  for (const agent of agents) {
    const option = document.createElement("option");
    option.value = agent.name;
    option.dataset.description = agent.description || "";
    if (agent.status === "misconfigured") {
      option.textContent = `${agent.name} (misconfigured)`;
      option.dataset.problem = problems[agent.name] || "misconfigured: see the signoff dev console";
    } else {
      option.textContent = agent.name;
      option.dataset.warning = (warnings[agent.name] || []).map((w) => `warning: ${w}`).join("\n");
    }
    select.append(option);
  }
  // Start on an agent that works.
  const ready = agents.find((agent) => agent.status !== "misconfigured");
  if (ready) select.value = ready.name;
  describeAgent();
}

function describeAgent() {
  const selected = $("agent").selectedOptions[0];
  $("agent-description").textContent = selected ? selected.dataset.description : "";
  const broken = selected ? selected.dataset.problem || "" : "";
  $("agent-problem").textContent = broken || (selected ? selected.dataset.warning || "" : "");
  $("send").disabled = Boolean(broken);
}

function newSession() {
  sessionId = null;
  $("session").textContent = "a new one";
  $("conversation").replaceChildren();
  $("events").replaceChildren();
  $("send-error").textContent = "";
  setStatus("idle");
}

$("send-form").addEventListener("submit", send);
// Another API: its agents, and a new session (this one is the other API's).
$("base-url").addEventListener("change", () => { newSession(); loadAgents(); });
$("stream-url").placeholder = "the API base URL";
$("new-session").addEventListener("click", newSession);
$("agent").addEventListener("change", () => { describeAgent(); newSession(); });
$("approve").addEventListener("click", () => {
  let body;
  try {
    body = approveBody();
  } catch (error) {
    $("approval-error").textContent = error.message;
    return;
  }
  decide($("approval"), (client, id) => client.approve(id, body), "approval-error", [$("approve"), $("deny")]);
});
$("deny").addEventListener("click", () => {
  const body = denyBody();
  decide($("approval"), (client, id) => client.deny(id, body), "approval-error", [$("approve"), $("deny")]);
});
$("answer-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const choice = document.querySelector("input[name=choice]:checked");
  const answer = $("answer").value.trim() || (choice ? choice.value : "");
  if (!answer) {
    $("question-error").textContent = "Choose an option or write an answer.";
    return;
  }
  decide($("question"), (client, id) => client.answer(id, answer), "question-error", [$("send-answer")]);
});
// A dialog closed with Escape leaves the decision open: it can still be made from a link.
$("base-url").placeholder = window.location.origin;
// A module's functions are its own; the browser tests feed events to the page's handler.
Object.assign(window, { handle, closeDialogs });
loadAgents();
