// The client against the local stack, over every transport: the scripted turns of the Python
// client's conformance test (tests/e2e/transport/test_transport_conformance.py) — one that finishes, one
// approved, one denied with a reason, a question answered, a batch of calls, a model that fails
// — and streams dropped mid-turn, finished by long-poll. What a turn yields is checked against
// what the session committed (the status route, read here without the client): `session`, the
// session's events once each and in order, then the one `done` the status says.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Absent,
  BadInput,
  Client,
  Conflict,
  Unauthorized,
  newId,
  sseEvents,
  stopReasonOf,
} from "../dist/client.js";
import { cutting, noStream } from "./support/fetches.mjs";
import { startStack } from "./support/stack.mjs";

const FINISHES = "where is order A-1001?";
const ASKS = "refund order A-1001 please";
const BATCH = "compare orders A-1001 and A-1002";
const FAILS = "hello";
const QUESTION = "which order was it?";
const ANSWER = "A-1002";
const WHY = "not this one";

const TURNS = [
  { name: "finishes", message: FINISHES, text: "Order A-1001 costs 42.0." },
  { name: "approved", message: ASKS, text: "Refunded 42.0." },
  {
    name: "denied with a reason",
    message: ASKS,
    decide: "deny",
    text: "Not done: issue_refund was denied.",
    stopReason: "denied",
  },
  { name: "question", message: QUESTION, text: "Order A-1002 costs 58.5." },
  { name: "batch", message: BATCH, text: "Both found." },
];

const BATCH_ORDER = [
  "actauth:decision lookup_order",
  "tool:started lookup_order",
  "actauth:decision lookup_order",
  "tool:started lookup_order",
  "actauth:decision add_note",
  "tool:started add_note",
  "toollane:result lookup_order",
  "tool:result lookup_order",
  "toollane:result lookup_order",
  "tool:result lookup_order",
  "toollane:result add_note",
  "tool:result add_note",
];

/** The turn through the client, deciding what it asks (approve, or deny with WHY; ANSWER). */
async function viaClient(client, agent, message, { decide = "approve", sessionId } = {}) {
  const turn = client.send(agent, message, { sessionId });
  const events = [];
  const decisions = [];
  for await (const event of turn) {
    events.push(event);
    const pending = turn.pending;
    if (pending === null) continue;
    assert.equal(turn.stopReason, pending.kind === "approval" ? "pending_approval" : "pending_question");
    if (pending.kind === "question") decisions.push(await pending.answer(ANSWER));
    else if (decide === "approve") decisions.push(await pending.approve());
    else decisions.push(await pending.deny(WHY));
  }
  return { events, turn, decisions };
}

/** The status route's body, read without the client. */
async function committed(stack, agent, sessionId, after = 0) {
  const response = await fetch(`${stack.url}/agents/${agent}/sessions/${sessionId}?after=${after}`);
  assert.equal(response.status, 200, await response.clone().text());
  return response.json();
}

function doneOf(status) {
  return { type: "done", text: status.text, ...(status.stopReason ? { stopReason: status.stopReason } : {}) };
}

/** The streamed turn is the committed one: session, every event once, in order, one done. */
async function assertTheCommittedTurn(stack, agent, events, turn, base = 0) {
  const status = await committed(stack, agent, turn.sessionId, base);
  assert.equal(status.status, "done");
  assert.deepEqual(events, [{ type: "session", sessionId: turn.sessionId }, ...status.events, doneOf(status)]);
  assert.deepEqual(turn.done, doneOf(status));
  assert.equal(turn.pending, null);
  assert.equal(turn.error, null);
  return status;
}

function kinds(events) {
  return events.map((event) => event.type);
}

describe("the client against the local stack", { timeout: 300_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.stop();
  });

  for (const transport of ["sse", "poll", "auto"]) {
    for (const expected of TURNS) {
      test(`${expected.name}, over ${transport}`, async () => {
        const client = new Client(stack.url, { transport, wait: 5 });
        const { events, turn } = await viaClient(client, "shop", expected.message, expected);
        await assertTheCommittedTurn(stack, "shop", events, turn);
        assert.equal(turn.done.text, expected.text);
        assert.equal(turn.stopReason, expected.stopReason);
        if (expected.message === ASKS) {
          const asked = events.findIndex((e) => e.type === "approval:pending");
          assert.equal(events[asked].tool, "issue_refund");
          assert.deepEqual(events[asked].args, { orderId: "A-1001", amount: 42 });
        }
        if (expected.decide === "deny") {
          const [denied] = events.filter((e) => e.type === "tool:result" && e.tool === "issue_refund");
          assert.equal(denied.statusText, "Denied.");
          assert.equal(denied.detailText, `Denied by anonymous@default (${WHY}).`);
          assert.deepEqual(events.at(-2), { type: "loop:denied", deniedTools: ["issue_refund"] });
        }
        if (expected.message === QUESTION) {
          const [question] = events.filter((e) => e.type === "question:pending");
          assert.equal(question.question, "Which order?");
          assert.deepEqual(question.options, ["A-1001", "A-1002"]);
        }
        if (expected.message === BATCH) {
          const order = events
            .filter((e) => ["actauth:decision", "tool:started", "toollane:result", "tool:result"].includes(e.type))
            .map((e) => `${e.type} ${e.tool ?? e.name}`);
          assert.deepEqual(order, BATCH_ORDER);
        }
      });
    }
  }

  for (const frames of [1, 2, 4, 6, 9]) {
    test(`an SSE stream dropped after ${frames} frames is finished by long-poll`, async () => {
      const cut = cutting("/messages/stream", { frames });
      const client = new Client(stack.url, { transport: "sse", wait: 5, fetch: cut.fetch });
      const { events, turn } = await viaClient(client, "shop", ASKS);
      assert.equal(cut.cuts, 1);
      await assertTheCommittedTurn(stack, "shop", events, turn);
      assert.equal(turn.done.text, "Refunded 42.0.");
      // after the cut, the status route carried the rest
      const cutAt = cut.calls.indexOf(`POST /agents/shop/messages/stream`);
      assert.ok(cut.calls.slice(cutAt + 1).some((call) => call.startsWith(`GET /agents/shop/sessions/${turn.sessionId}`)));
      assert.equal(kinds(events).filter((k) => k === "approval:pending").length, 1);
    });
  }

  for (const [suffix, name] of [
    ["/messages", "the message's answer"],
    ["/approve", "the decision's answer"],
  ]) {
    test(`a long-poll turn whose ${name} is lost goes on without a lost or doubled event`, async () => {
      const cut = cutting(suffix);
      const client = new Client(stack.url, { transport: "poll", wait: 5, fetch: cut.fetch });
      const { events, turn, decisions } = await viaClient(client, "shop", ASKS);
      assert.equal(cut.cuts, 1);
      await assertTheCommittedTurn(stack, "shop", events, turn);
      if (suffix === "/approve") assert.deepEqual(decisions, [null], "sent again: the first was taken");
    });
  }

  test("without a stream route, auto falls back to long-poll and remembers it; sse says so", async () => {
    const refusing = noStream();
    const client = new Client(stack.url, { wait: 5, fetch: refusing.fetch });
    const first = await viaClient(client, "shop", ASKS);
    const second = await viaClient(client, "shop", FINISHES);
    assert.equal(client.transport, "poll");
    assert.equal(refusing.refused, 1, "asked for the stream once, then remembered it is absent");
    await assertTheCommittedTurn(stack, "shop", first.events, first.turn);
    await assertTheCommittedTurn(stack, "shop", second.events, second.turn);
    const forced = new Client(stack.url, { transport: "sse", fetch: noStream().fetch });
    await assert.rejects(viaClient(forced, "shop", FINISHES), (error) => {
      assert.ok(error instanceof Absent && error.status === 404 && /no route/.test(error.message));
      return true;
    });
  });

  test("a stream URL that cannot be reached falls back to long-poll on the API", async () => {
    const client = new Client(stack.url, { streamUrl: "http://127.0.0.1:9/", wait: 5 });
    const { events, turn } = await viaClient(client, "shop", ASKS);
    assert.equal(client.transport, "poll");
    await assertTheCommittedTurn(stack, "shop", events, turn);
  });

  for (const transport of ["sse", "poll"]) {
    test(`a failing model ends the turn with its error, over ${transport}`, async () => {
      const client = new Client(stack.url, { transport, wait: 5 });
      const { events, turn } = await viaClient(client, "broken", FAILS);
      assert.deepEqual(kinds(events), ["session", "budget:check", "error"]);
      assert.equal(turn.error, events.at(-1).error);
      assert.equal(turn.done, null);
      const status = await committed(stack, "broken", turn.sessionId);
      assert.deepEqual(status.events, events.slice(1));
      await assert.rejects(viaClient(client, "nobody", FAILS), (error) => {
        assert.ok(error instanceof Absent && /unknown agent/.test(error.message));
        return true;
      });
    });
  }

  test("the plain route: send, decide, decide … as one loop of 200 / 202 replies", async () => {
    const client = new Client(stack.url);
    const asked = [];
    let reply = await client.message("shop", QUESTION);
    while (reply.pending) {
      assert.equal(reply.events.at(-1).id, reply.id, "a 202 ends with the item it names");
      asked.push(stopReasonOf(reply));
      reply = reply.type === "question" ? await client.answer(reply.id, ANSWER) : await client.approve(reply.id);
    }
    assert.deepEqual(asked, ["pending_question"]);
    assert.equal(reply.text, "Order A-1002 costs 58.5.");
    assert.equal(stopReasonOf(reply), undefined);
    const status = await committed(stack, "shop", reply.sessionId);
    assert.deepEqual(reply.events, status.events, "the decision's answer carries the whole turn");

    const paused = await client.message("shop", ASKS);
    assert.equal(paused.type, "approval");
    assert.equal(paused.tool, "issue_refund");
    assert.equal(stopReasonOf(paused), "pending_approval");
    assert.ok(paused.statusUrl.endsWith(`/sessions/${paused.sessionId}`));
    const denied = await client.deny(paused.id, { reason: WHY });
    assert.equal(denied.stopReason, "denied");
    assert.equal(stopReasonOf(denied), "denied");
    const result = denied.events.find((e) => e.type === "tool:result" && e.tool === "issue_refund");
    assert.equal(result.detailText, `Denied by anonymous@default (${WHY}).`);
    // decided once: the next decision on it is a conflict, with the item's state
    await assert.rejects(client.approve(paused.id), (error) => {
      assert.ok(error instanceof Conflict && error.code === "already_resolved");
      return true;
    });
  });

  test("the API key goes as x-api-key: the decision is the key's, a wrong key is refused", async () => {
    const client = new Client(stack.url, { apiKey: stack.apiKey, wait: 5 });
    const { turn } = await viaClient(client, "shop", ASKS);
    const status = await client.status("shop", turn.sessionId);
    assert.equal(status.status, "done");
    assert.match(status.decisions[0].actor, /^apikey:.+@default$/);
    const wrong = new Client(stack.url, { apiKey: "sok_sk_nobody_0000000000000000000000", wait: 5 });
    for (const transport of ["sse", "poll"]) {
      wrong.transport = transport;
      await assert.rejects(viaClient(wrong, "shop", FINISHES), (error) => {
        assert.ok(error instanceof Unauthorized && error.status === 401, String(error));
        return true;
      });
    }
  });

  test("approve with changes runs the call with them; a change the tool refuses is 422", async () => {
    const client = new Client(stack.url);
    const paused = await client.message("shop", ASKS);
    await assert.rejects(client.approve(paused.id, { args: { amount: 30 } }), (error) => {
      // issue_refund of the conformance shop is not editable
      assert.ok(error instanceof BadInput && error.status === 422 && error.code === "not_editable", String(error));
      return true;
    });
    const approved = await client.approve(paused.id, { note: "fine" });
    assert.equal(approved.text, "Refunded 42.0.");
  });

  for (const transport of ["sse", "poll"]) {
    test(`an aborted turn throws the signal's reason and leaves the turn paused, over ${transport}`, async () => {
      const client = new Client(stack.url, { transport, wait: 5 });
      const controller = new AbortController();
      const turn = client.send("shop", ASKS, { signal: controller.signal });
      const events = [];
      await assert.rejects(
        (async () => {
          for await (const event of turn) {
            events.push(event);
            if (event.type === "approval:pending") setTimeout(() => controller.abort(), 200);
          }
        })(),
        (error) => {
          assert.equal(error.name, "AbortError");
          return true;
        },
      );
      assert.equal(events.at(-1).type, "approval:pending");
      assert.equal(turn.stopReason, "pending_approval");
      const status = await committed(stack, "shop", turn.sessionId);
      assert.equal(status.status, "paused");
      assert.equal(status.pending.id, turn.pending.id);
      if (status.stopReason !== undefined) assert.equal(status.stopReason, "pending_approval");
      // the turn waits durably: deciding it finishes it, and its events are all there
      await client.approve(turn.pending.id);
      const done = [];
      for await (const event of client.events("shop", turn.sessionId, { after: events.length - 1, follow: true })) {
        done.push(event.type);
      }
      assert.equal(done.at(-1), "loop:done");
      assert.equal((await client.status("shop", turn.sessionId)).text, "Refunded 42.0.");
    });
  }

  test("a follow-up in the same session yields only its own turn; the session's events read back", async () => {
    const client = new Client(stack.url, { transport: "poll", wait: 5 });
    const first = await viaClient(client, "shop", FINISHES);
    const session = first.turn.sessionId;
    for (const transport of ["poll", "sse"]) {
      client.transport = transport;
      const base = (await committed(stack, "shop", session)).next;
      const next = await viaClient(client, "shop", BATCH, { sessionId: session });
      assert.equal(next.turn.sessionId, session);
      await assertTheCommittedTurn(stack, "shop", next.events, next.turn, base);
    }
    const all = [];
    for await (const event of client.events("shop", session)) all.push(event);
    assert.deepEqual(all, (await committed(stack, "shop", session)).events);
  });

  test("the agents and an agent's config", async () => {
    const client = new Client(`${stack.url}/`);
    const names = (await client.agents()).map((agent) => agent.name).sort();
    assert.deepEqual(names, ["broken", "shop"]);
    const config = await client.config("shop");
    assert.deepEqual(config.tools.map((tool) => tool.name).sort(), ["add_note", "issue_refund", "lookup_order"]);
    await assert.rejects(client.status("shop", newId()), Absent);
  });
});

describe("a stack without the stream route", { timeout: 120_000 }, () => {
  let stack;
  before(async () => {
    stack = await startStack({ stream: false });
  });
  after(async () => {
    await stack?.stop();
  });

  test("answers 404 or 405 for it, and auto follows the turn by long-poll", async () => {
    const refused = await fetch(`${stack.url}/agents/shop/messages/stream`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: FINISHES }),
    });
    assert.ok([404, 405].includes(refused.status), String(refused.status));
    const client = new Client(stack.url, { wait: 5 });
    const { events, turn } = await viaClient(client, "shop", ASKS);
    assert.equal(client.transport, "poll");
    await assertTheCommittedTurn(stack, "shop", events, turn);
  });
});

describe("SSE frames", () => {
  function body(...chunks) {
    const encoder = new TextEncoder();
    return new ReadableStream({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
        controller.close();
      },
    });
  }

  async function all(stream) {
    const events = [];
    for await (const event of sseEvents(stream)) events.push(event);
    return events;
  }

  test("split anywhere, CRLF or LF, comments skipped, a cut frame dropped", async () => {
    const text = ': keep-alive\r\n\r\nevent: session\r\ndata: {"type":"session","sessionId":"s"}\r\n\r\n' +
      'event: done\ndata: {"type":"done",\ndata: "text":"é"}\n\nevent: done\ndata: {"type"';
    const bytes = new TextEncoder().encode(text);
    for (let split = 1; split < bytes.length; split += 7) {
      assert.deepEqual(await all(body(bytes.slice(0, split), bytes.slice(split))), [
        { type: "session", sessionId: "s" },
        { type: "done", text: "é" },
      ]);
    }
  });

  test("ids are ULIDs, in time order", () => {
    const earlier = newId(Date.now() - 1000);
    const later = newId();
    assert.match(later, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.ok(earlier < later);
  });
});
