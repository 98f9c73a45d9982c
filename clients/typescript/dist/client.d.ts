/**
 * A client of a signoff API for browsers and Node.js (fetch, streams and AbortSignal only),
 * over whichever transport the API offers.
 *
 * ```ts
 * import { Client } from "@signoff/client";
 *
 * const client = new Client("http://127.0.0.1:3000", { apiKey: "sok_…" });
 * const turn = client.send("customer-service", "refund order A-1001");
 * for await (const event of turn) {      // the protocol's LoopEvents
 *   if (turn.pending) await turn.pending.approve(); // or .deny("why"), .answer("text")
 * }
 * console.log(turn.done ? turn.done.text : turn.error);
 * ```
 *
 * A turn yields what the streamed transports carry: `session` first, the engine's events,
 * then one `done` (or one `error` when the turn failed after it started). Two transports
 * carry it, as `signoff.client` (Python) has them:
 *
 * - **SSE** (`POST /agents/{name}/messages/stream`, read from the fetch response's body):
 *   the local stack serves it at its base URL; a deployed HTTP API does not, the optional
 *   stream function does at a URL of its own (the stack's `StreamUrl` output): give it as
 *   `streamUrl` and turns stream from there, everything else still going to the base URL.
 * - **long-poll**: `POST /agents/{name}/messages` in the background while the status route
 *   `GET /agents/{name}/sessions/{id}?after=N&wait=S` yields each step's events as it is
 *   committed, until the turn is done. The client names the session (`sessionId`), so it can
 *   follow it before the POST answers.
 *
 * `transport: "auto"` (the default) tries SSE and falls back to long-poll when the server has
 * no stream route (a 404 that names no route, not an agent, or a 405) or when a separate
 * `streamUrl` cannot be reached (nothing was sent there), remembering that; `"sse"` or
 * `"poll"` force one. A stream that drops mid-turn is resumed on the status route from the
 * last event seen: the status route numbers a session's events, so no event is lost or
 * doubled.
 *
 * The third transport is the **plain** response, one request each, the uniform loop of
 * PROTOCOL.md: `message()` answers the 200 / 202 family (`Finished` or `Paused`), and
 * `approve()`, `deny()` and `answer()` answer the same family for what came next:
 *
 * ```ts
 * let reply: Reply | null = await client.message("customer-service", "refund order A-1001");
 * while (reply?.pending && reply.type !== "running") {
 *   reply = reply.type === "approval" ? await client.approve(reply.id!) : await client.answer(reply.id!, "A-1002");
 * } // null: a decision sent again after its answer was lost, the first sending taken
 * ```
 *
 * An error answer is thrown as the `SignoffError` of its HTTP status: 400 `BadInput`, 401
 * `Unauthorized`, 403 `Forbidden`, 404 `Absent`, 409 `Conflict`, 410 `Gone`, 5xx
 * `Unavailable` (the API's `error` and `detail` on it); a server that stays unreachable is
 * `Unavailable` too. Every call takes an `AbortSignal`; an aborted call throws the signal's
 * reason (an `AbortError`), and leaves the turn as it is on the server (paused, or running to
 * its end, durably).
 *
 * This file imports nothing at run time: it is one ES module, which the local stack serves to
 * its playground as `/signoff-client.js`.
 */
import type { ApprovalPending, Done, LoopEvent, QuestionPending } from "./events.generated.js";
export type * from "./events.generated.js";
/** How a turn travels: SSE, long-poll, or SSE with long-poll where there is no stream. */
export type Transport = "auto" | "sse" | "poll";
/** Why a turn stopped: finished (`max_turns`, `denied`; none for a plain answer) or paused. */
export type StopReason = "max_turns" | "denied" | "pending_approval" | "pending_question";
/** The status route waits at most 25 s (API Gateway's HTTP API gives up at 30 s). */
export declare const POLL_WAIT = 20;
export interface ClientOptions {
    /** Sent as `x-api-key`; none: the API's anonymous caller, where it allows one. */
    apiKey?: string | null;
    /** Where the SSE route is, when not at the base URL (a deployed stack's `StreamUrl`). */
    streamUrl?: string | null;
    /** Default `"auto"`. */
    transport?: Transport;
    /** Seconds the status route may wait for new events (at most 25); default 20. */
    wait?: number;
    /** Attempts for a status read or a decision whose connection drops; default 5. */
    retries?: number;
    /** The fetch to use (a test's, a proxy's); default the global one. */
    fetch?: typeof fetch;
}
export interface CallOptions {
    signal?: AbortSignal;
}
export interface SendOptions extends CallOptions {
    /** Continue this session; none: a new one, its id chosen by the client. */
    sessionId?: string;
}
/** What an approval needs before its turn continues, and the votes so far. */
export interface Approvals {
    needed: number;
    denyQuorum: number;
    approvers: string[];
    votes: {
        person: string;
        actor: string;
        channel: string;
        decision: "approve" | "deny";
        at: string;
        note?: string;
    }[];
    /** The tally as the cards show it: `1 of 2 approvals — alice`. */
    line: string;
}
/** Where a waiting item stands on its escalation ladder, once a step was taken. */
export interface Escalation {
    step: number;
    steps: number;
    at?: string;
    to: string[];
    asked: string[];
    line: string;
}
/** 200: the turn finished. */
export interface Finished {
    pending?: undefined;
    text: string;
    sessionId: string;
    /** The turn's engine events (no `session`, no `done`: the body says what they would). */
    events: LoopEvent[];
    stopReason?: "max_turns" | "denied";
}
/**
 * 202: the turn waits for a decision (`approval`), an answer (`question`), or, deployed,
 * for more time (`running`: follow `statusUrl`). A vote short of its item's quorum answers
 * this too, for the same item, with `approvals` holding the new vote.
 */
export interface Paused {
    pending: true;
    type: "approval" | "question" | "running";
    sessionId: string;
    events: LoopEvent[];
    statusUrl: string;
    /** Sent by APIs that say why the turn stopped; `stopReasonOf` reads it, or the type. */
    stopReason?: "pending_approval" | "pending_question";
    id?: string;
    tool?: string;
    args?: Record<string, unknown>;
    scope?: {
        tenant: string;
        environment: string;
        agent: string;
    };
    reason?: string;
    question?: string;
    options?: string[];
    approveUrl?: string;
    denyUrl?: string;
    answerUrl?: string;
    expiresAt?: string;
    /** The decision card: one line, the request that started the turn, the agent's words. */
    summary?: string;
    request?: string;
    said?: string;
    escalation?: Escalation;
    approvals?: Approvals;
}
/** The plain route's answer, and every decision's: PROTOCOL.md's two-shape family. */
export type Reply = Finished | Paused;
/** One decision on a pending item of a session: who, through which channel, what, when. */
export interface SessionDecision {
    pendingId: string;
    decision: "approved" | "denied" | "answered" | "expired";
    actor: string;
    channel: string;
    at: string;
    tool?: string;
    note?: string;
}
/** `GET /agents/{name}/sessions/{id}`: where the session stands, and its events after N. */
export interface SessionStatus {
    sessionId: string;
    agent: string;
    status: "idle" | "running" | "paused" | "done";
    pending?: Paused | null;
    decisions: SessionDecision[];
    text?: string;
    stopReason?: StopReason;
    events: LoopEvent[];
    /** Pass as `after` to get only newer events. */
    next: number;
}
/** One entry of `GET /agents`. */
export interface AgentSummary {
    name: string;
    description: string;
    status?: "ready" | "misconfigured";
}
/** `GET /agents/{name}/config`: the agent's resolved configuration (never a secret). */
export interface AgentConfig {
    name?: string;
    tools?: {
        name: string;
        editable?: boolean;
        safe?: boolean;
        [key: string]: unknown;
    }[];
    [key: string]: unknown;
}
/** Why a turn stopped, from a reply: its `stopReason` when the API sends it, else its type. */
export declare function stopReasonOf(reply: Reply): StopReason | undefined;
/** An error answer of the API (or an API that could not be reached). */
export declare class SignoffError extends Error {
    /** The HTTP status; 0 when no answer came. */
    readonly status: number;
    /** The API's `error` code (`already_resolved`, `invalid_changes`, …), when it sent one. */
    readonly code: string | undefined;
    /** The API's `detail`, or what went wrong. */
    readonly detail: string;
    /** The error answer's JSON body (`{}` when it had none). */
    readonly body: Record<string, unknown>;
    constructor(detail: string, status?: number, body?: Record<string, unknown>);
}
export declare class BadInput extends SignoffError {
}
export declare class Unauthorized extends SignoffError {
}
export declare class Forbidden extends SignoffError {
}
export declare class Absent extends SignoffError {
}
export declare class Conflict extends SignoffError {
}
export declare class Gone extends SignoffError {
}
export declare class Unavailable extends SignoffError {
}
/** An answer as read once: its status and its JSON body (null when it was no JSON). */
interface Answer {
    status: number;
    statusText: string;
    body: unknown;
}
/** The error an error answer stands for (its family by status; `detail` says why). */
export declare function errorFor(answer: Answer): SignoffError;
/** A 26-character ULID (48 bits of milliseconds, 80 random bits), as signoff's ids are. */
export declare function newId(now?: number): string;
/**
 * The events of an SSE body (`event: <type>\ndata: <json>\n\n`), parsed as they arrive:
 * comments (the `: keep-alive`) skipped, `data:` lines joined. A frame cut off by the end of
 * the body is not an event.
 */
export declare function sseEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<LoopEvent>;
/** A signoff API at `baseUrl`. */
export declare class Client {
    readonly baseUrl: string;
    readonly apiKey: string | null;
    readonly streamUrl: string | null;
    /** `"auto"` becomes `"poll"` once the server showed it has no stream. */
    transport: Transport;
    readonly wait: number;
    readonly retries: number;
    private readonly fetcher;
    constructor(baseUrl: string, options?: ClientOptions);
    /** The headers every request carries: the API key, when there is one. */
    headers(json?: boolean): Record<string, string>;
    /** A new turn of `agent` (continuing `sessionId` if given); iterate it to run it. */
    send(agent: string, message: string, options?: SendOptions): Turn;
    /** The plain route: one request, answered when the turn finished (200) or paused (202). */
    message(agent: string, message: string, options?: SendOptions): Promise<Reply>;
    /**
     * Approve an approval (with changed `args` where the tool allows it; only the fields that
     * change). Answers what the turn did next; null when an earlier sending of this decision,
     * whose answer was lost, was taken (the turn goes on: follow it on the status route).
     */
    approve(id: string, options?: CallOptions & {
        note?: string;
        args?: Record<string, unknown>;
    }): Promise<Reply | null>;
    /** Deny an approval, saying why if you like (the model reads it; at most 2,000 characters). */
    deny(id: string, options?: CallOptions & {
        reason?: string;
    }): Promise<Reply | null>;
    /** Answer a question. */
    answer(id: string, text: string, options?: CallOptions): Promise<Reply | null>;
    /** The status route's body: where the session stands, and its events after the `after`-th. */
    status(agent: string, sessionId: string, options?: CallOptions & {
        after?: number;
        wait?: number;
    }): Promise<SessionStatus>;
    /** A session's committed events after the `after`-th; with `follow`, on until the turn stops. */
    events(agent: string, sessionId: string, options?: CallOptions & {
        after?: number;
        follow?: boolean;
    }): AsyncGenerator<LoopEvent>;
    /** `GET /agents`: the agents the API serves. */
    agents(options?: CallOptions): Promise<AgentSummary[]>;
    /** `GET /agents/{name}/config`: an agent's resolved configuration. */
    config(agent: string, options?: CallOptions): Promise<AgentConfig>;
    /** A request to the API (or to `base`); a connection that fails is `Unavailable`. */
    request(path: string, init?: RequestInit, base?: string): Promise<Response>;
    private get;
    private post;
    private reply;
    /**
     * Send a decision or an answer; one whose connection dropped is sent again. The second
     * sending is answered 409 when the first was taken (see `taken`): then null.
     */
    private decide;
    /**
     * The status route's body (null: no such session); a dropped read is asked again, backing
     * off, up to `retries` times.
     */
    statusOrNull(agent: string, sessionId: string, after: number, wait?: number, signal?: AbortSignal): Promise<SessionStatus | null>;
    /** How many events the session holds (0 for a new one). */
    sessionNext(agent: string, sessionId: string, signal?: AbortSignal): Promise<number>;
}
/** An approval or a question the turn waits on; deciding it continues the turn. */
export declare class Pending {
    readonly event: ApprovalPending | QuestionPending;
    private readonly client;
    constructor(event: ApprovalPending | QuestionPending, client: Client);
    get id(): string;
    get kind(): "approval" | "question";
    /** Approve the call (with changed `args`, the fields to change, if the tool allows it). */
    approve(options?: CallOptions & {
        note?: string;
        args?: Record<string, unknown>;
    }): Promise<Reply | null>;
    /** Deny the call; the reason reaches the model. */
    deny(reason?: string, options?: CallOptions): Promise<Reply | null>;
    answer(text: string, options?: CallOptions): Promise<Reply | null>;
}
/** One message's turn: iterate it for its events, once. */
export declare class Turn implements AsyncIterable<LoopEvent> {
    readonly agent: string;
    readonly message: string;
    /** The session: the one given, else a new id chosen here (the server may answer another). */
    sessionId: string;
    /** What the turn waits on now (after `approval:pending` / `question:pending`), else null. */
    pending: Pending | null;
    /** The turn's `done`, once it came. */
    done: Done | null;
    /** The turn's failure (its `error` event's text), once it came. */
    error: string | null;
    private readonly client;
    private readonly signal;
    private readonly continuing;
    private base;
    private seen;
    private announced;
    private started;
    constructor(client: Client, agent: string, message: string, options: SendOptions);
    /** Why the turn stopped: `done`'s reason, or what it waits on. */
    get stopReason(): StopReason | undefined;
    [Symbol.asyncIterator](): AsyncGenerator<LoopEvent>;
    /** The turn over SSE; false when the server has no stream (auto falls back). */
    private sse;
    /**
     * The message posted in the background; its events followed on the status route. The plain
     * route answers when the turn finished or paused; the status route's long-poll has each
     * step's events as it is committed, so they are yielded live.
     */
    private poll;
    /** The turn's events after the last one seen, from the status route, to its end. */
    private follow;
    /**
     * The server put the message in another session (an agent's `session_id_for` hook): its
     * events are then followed there, from the number of the answer's first.
     */
    private moved;
    private take;
}
