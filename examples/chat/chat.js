// A minimal chat on the signoff TypeScript client (clients/typescript): one Client, one turn per
// message, and what the turn waits on decided in the page. The local stack serves this page at
// /examples/chat and the client at /signoff-client.js; elsewhere, serve dist/client.js beside
// your page (and, for a deployed API on another origin, allow the page's origin: CORS in
// docs/protocol.md). Everything shown is text (textContent), never HTML.
import { Client } from "/signoff-client.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(window.location.search);
const agent = params.get("agent") || "customer-service";
// The API at this page's origin; ?key= for an API key (else the anonymous caller, locally).
const client = new Client(window.location.origin, { apiKey: params.get("key") });
let sessionId; // the conversation: every turn after the first continues it

function say(who, text) {
  const line = document.createElement("li");
  line.className = who;
  line.textContent = `${who}: ${text}`;
  $("chat").append(line);
}

// Shows what the turn waits on; the person's choice goes through the client. The stream goes
// on by itself once the item is decided, here or anywhere else (a link, Slack).
function offer(pending) {
  const event = pending.event;
  $("asked").textContent = pending.kind === "approval"
    ? `${event.tool} ${JSON.stringify(event.args)} needs your approval (${event.reason})`
    : event.question + (event.options ? ` (${event.options.join(" / ")})` : "");
  $("approve").hidden = $("deny").hidden = pending.kind !== "approval";
  $("answer").hidden = pending.kind === "approval";
  $("note").value = "";
  $("decision").hidden = false;
  $("decision").onsubmit = async (submitted) => {
    submitted.preventDefault();
    const text = $("note").value.trim();
    $("decision").hidden = true;
    const action = submitted.submitter.value;
    try {
      if (action === "approve") await pending.approve();
      else if (action === "deny") await pending.deny(text || undefined);
      else await pending.answer(text || event.options?.[0] || "yes");
      say("you", action === "answer" ? text || event.options?.[0] || "yes" : `${action} ${text}`.trim());
    } catch (error) {
      say("error", error.message); // 409: decided elsewhere first; the stream says how
    }
  };
}

$("agent").textContent = agent;
$("send").addEventListener("submit", async (submitted) => {
  submitted.preventDefault();
  const message = $("message").value.trim();
  $("message").value = "";
  say("you", message);
  // One turn: its events as they happen, session first, done (or error) last.
  const turn = client.send(agent, message, { sessionId });
  try {
    for await (const event of turn) {
      if (event.type === "session") sessionId = event.sessionId;
      if (event.type === "assistant:text") say("agent", event.text);
      if (turn.pending) offer(turn.pending);
      else $("decision").hidden = true;
    }
  } catch (error) {
    say("error", error.message);
    return;
  }
  if (turn.done) say("agent", turn.done.stopReason ? `${turn.done.text} (${turn.done.stopReason})` : turn.done.text);
  else say("error", turn.error);
});
