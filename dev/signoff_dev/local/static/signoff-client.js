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
/** The status route waits at most 25 s (API Gateway's HTTP API gives up at 30 s). */
export const POLL_WAIT = 20;
/** How often a watcher asks while the message has not reached the session yet (ms). */
const SETTLE_MS = 50;
/** `?after=` for "only the count": the status route then returns no event, and `next`. */
const COUNT_ONLY = 2 ** 31;
/** Why a turn stopped, from a reply: its `stopReason` when the API sends it, else its type. */
export function stopReasonOf(reply) {
    if (!reply.pending)
        return reply.stopReason;
    if (reply.stopReason)
        return reply.stopReason;
    if (reply.type === "approval")
        return "pending_approval";
    if (reply.type === "question")
        return "pending_question";
    return undefined;
}
// -- errors ---------------------------------------------------------------------------------
/** An error answer of the API (or an API that could not be reached). */
export class SignoffError extends Error {
    /** The HTTP status; 0 when no answer came. */
    status;
    /** The API's `error` code (`already_resolved`, `invalid_changes`, …), when it sent one. */
    code;
    /** The API's `detail`, or what went wrong. */
    detail;
    /** The error answer's JSON body (`{}` when it had none). */
    body;
    constructor(detail, status = 0, body = {}) {
        const code = typeof body.error === "string" ? body.error : undefined;
        const text = code ? `${code}: ${detail}` : detail;
        super(status ? `${text} (HTTP ${status})` : text);
        this.name = new.target.name;
        this.status = status;
        this.code = code;
        this.detail = detail;
        this.body = body;
    }
}
export class BadInput extends SignoffError {
}
export class Unauthorized extends SignoffError {
}
export class Forbidden extends SignoffError {
}
export class Absent extends SignoffError {
}
export class Conflict extends SignoffError {
}
export class Gone extends SignoffError {
}
export class Unavailable extends SignoffError {
}
const FAMILIES = {
    400: BadInput,
    401: Unauthorized,
    403: Forbidden,
    404: Absent,
    409: Conflict,
    410: Gone,
};
async function read(response) {
    let body = null;
    try {
        body = await response.json();
    }
    catch {
        // not JSON (a gateway's page, an empty body): the status says it
    }
    return { status: response.status, statusText: response.statusText, body };
}
function objectOf(body) {
    return body !== null && typeof body === "object" && !Array.isArray(body)
        ? body
        : {};
}
/** The error an error answer stands for (its family by status; `detail` says why). */
export function errorFor(answer) {
    const body = objectOf(answer.body);
    const detail = String(body.detail || body.message || answer.statusText || "error");
    const family = FAMILIES[answer.status] ?? (answer.status >= 500 ? Unavailable : BadInput);
    return new family(detail, answer.status, body);
}
/** A 404 or 405 for a route the server does not have (not an unknown agent or session). */
function noRoute(answer) {
    if (answer.status === 405)
        return true;
    if (answer.status !== 404)
        return false;
    if (answer.body === null)
        return true; // not the API's JSON error: a gateway's own 404
    const body = objectOf(answer.body);
    const detail = typeof body.detail === "string" ? body.detail : "";
    // API Gateway's own 404 ({"message": "Not Found"}) or the API's catch-all route.
    return !detail || detail.startsWith("no route ");
}
/**
 * Whether a decision sent again was answered "the first sending was taken":
 * `already_resolved` (the item is decided, by it or by a later vote), or `already_voted`
 * with `resent` (the vote on record is this very one). Any other `already_voted` is a vote
 * cast another way: an error.
 */
function taken(answer) {
    if (answer.status !== 409)
        return false;
    const body = objectOf(answer.body);
    return body.error === "already_resolved" || (body.error === "already_voted" && body.resent === true);
}
function aborted(signal) {
    return signal !== undefined && signal.aborted;
}
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted) {
            reject(signal.reason);
            return;
        }
        const timer = setTimeout(() => {
            signal?.removeEventListener("abort", stop);
            resolve();
        }, ms);
        const stop = () => {
            clearTimeout(timer);
            reject(signal?.reason);
        };
        signal?.addEventListener("abort", stop, { once: true });
    });
}
// -- ids ------------------------------------------------------------------------------------
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** A 26-character ULID (48 bits of milliseconds, 80 random bits), as signoff's ids are. */
export function newId(now = Date.now()) {
    let value = BigInt(now) << 80n;
    const random = crypto.getRandomValues(new Uint8Array(10));
    for (const [index, byte] of random.entries())
        value |= BigInt(byte) << BigInt(8 * (9 - index));
    let id = "";
    for (let i = 0; i < 26; i++) {
        id = CROCKFORD[Number(value & 31n)] + id;
        value >>= 5n;
    }
    return id;
}
// -- SSE ------------------------------------------------------------------------------------
/**
 * The events of an SSE body (`event: <type>\ndata: <json>\n\n`), parsed as they arrive:
 * comments (the `: keep-alive`) skipped, `data:` lines joined. A frame cut off by the end of
 * the body is not an event.
 */
export async function* sseEvents(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let data = [];
    try {
        for (;;) {
            const { value, done } = await reader.read();
            if (done)
                return;
            buffer += decoder.decode(value, { stream: true });
            // a lone \r may be the first half of a \r\n still on its way: wait for the next chunk
            let end;
            while ((end = lineEnd(buffer)) >= 0) {
                const line = buffer.slice(0, end);
                buffer = buffer.slice(buffer.startsWith("\r\n", end) ? end + 2 : end + 1);
                if (line === "") {
                    if (data.length)
                        yield JSON.parse(data.join("\n"));
                    data = [];
                }
                else if (line.startsWith("data:")) {
                    data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
                } // event:, id:, retry: and comments: the type is in the data
            }
        }
    }
    finally {
        // a consumer that stopped early: the connection is not kept open for it
        await reader.cancel().catch(() => undefined);
    }
}
function lineEnd(buffer) {
    for (let i = 0; i < buffer.length; i++) {
        const char = buffer[i];
        if (char === "\n")
            return i;
        if (char === "\r")
            return i + 1 < buffer.length ? i : -1;
    }
    return -1;
}
// -- the client -----------------------------------------------------------------------------
/** A signoff API at `baseUrl`. */
export class Client {
    baseUrl;
    apiKey;
    streamUrl;
    /** `"auto"` becomes `"poll"` once the server showed it has no stream. */
    transport;
    wait;
    retries;
    fetcher;
    constructor(baseUrl, options = {}) {
        this.baseUrl = trimmed(baseUrl);
        this.apiKey = options.apiKey || null;
        this.streamUrl = options.streamUrl ? trimmed(options.streamUrl) : null;
        this.transport = options.transport ?? "auto";
        this.wait = Math.min(options.wait ?? POLL_WAIT, 25);
        this.retries = Math.max(options.retries ?? 5, 1);
        const fetcher = options.fetch ?? globalThis.fetch;
        // a bare `fetch` must be called on the global object (a browser refuses other `this`)
        this.fetcher = (input, init) => fetcher.call(globalThis, input, init);
    }
    /** The headers every request carries: the API key, when there is one. */
    headers(json = false) {
        const headers = {};
        if (json)
            headers["content-type"] = "application/json";
        if (this.apiKey)
            headers["x-api-key"] = this.apiKey;
        return headers;
    }
    /** A new turn of `agent` (continuing `sessionId` if given); iterate it to run it. */
    send(agent, message, options = {}) {
        return new Turn(this, agent, message, options);
    }
    /** The plain route: one request, answered when the turn finished (200) or paused (202). */
    async message(agent, message, options = {}) {
        const body = { message };
        if (options.sessionId)
            body.sessionId = options.sessionId;
        return this.reply(await this.post(`/agents/${encode(agent)}/messages`, body, options.signal));
    }
    /**
     * Approve an approval (with changed `args` where the tool allows it; only the fields that
     * change). Answers what the turn did next; null when an earlier sending of this decision,
     * whose answer was lost, was taken (the turn goes on: follow it on the status route).
     */
    approve(id, options = {}) {
        const body = {};
        if (options.note)
            body.note = options.note;
        if (options.args)
            body.args = options.args;
        return this.decide(`/approvals/${encode(id)}/approve`, body, options.signal);
    }
    /** Deny an approval, saying why if you like (the model reads it; at most 2,000 characters). */
    deny(id, options = {}) {
        const body = options.reason ? { reason: options.reason } : {};
        return this.decide(`/approvals/${encode(id)}/deny`, body, options.signal);
    }
    /** Answer a question. */
    answer(id, text, options = {}) {
        return this.decide(`/questions/${encode(id)}/answer`, { answer: text }, options.signal);
    }
    /** The status route's body: where the session stands, and its events after the `after`-th. */
    async status(agent, sessionId, options = {}) {
        const status = await this.statusOrNull(agent, sessionId, options.after ?? 0, options.wait ?? 0, options.signal);
        if (status === null)
            throw new Absent(`no session ${sessionId} of ${agent}`, 404);
        return status;
    }
    /** A session's committed events after the `after`-th; with `follow`, on until the turn stops. */
    async *events(agent, sessionId, options = {}) {
        let after = options.after ?? 0;
        for (;;) {
            const wait = options.follow ? this.wait : 0;
            const status = await this.status(agent, sessionId, { after, wait, signal: options.signal });
            yield* status.events;
            after = status.next;
            if (!options.follow || (status.status !== "running" && status.status !== "paused"))
                return;
        }
    }
    /** `GET /agents`: the agents the API serves. */
    async agents(options = {}) {
        return (await this.get("/agents", options.signal));
    }
    /** `GET /agents/{name}/config`: an agent's resolved configuration. */
    async config(agent, options = {}) {
        return (await this.get(`/agents/${encode(agent)}/config`, options.signal));
    }
    // -- requests -----------------------------------------------------------------------------
    /** A request to the API (or to `base`); a connection that fails is `Unavailable`. */
    async request(path, init = {}, base = this.baseUrl) {
        try {
            return await this.fetcher(`${base}${path}`, init);
        }
        catch (error) {
            if (aborted(init.signal ?? undefined))
                throw init.signal.reason;
            throw new Unavailable(`${base} is unreachable (${describe(error)})`);
        }
    }
    async get(path, signal) {
        const answer = await read(await this.request(path, { headers: this.headers(), signal }));
        if (answer.status >= 400)
            throw errorFor(answer);
        return answer.body;
    }
    async post(path, body, signal) {
        const init = { method: "POST", headers: this.headers(true), body: JSON.stringify(body), signal };
        return read(await this.request(path, init));
    }
    reply(answer) {
        if (answer.status >= 400 || answer.body === null)
            throw errorFor(answer);
        return answer.body;
    }
    /**
     * Send a decision or an answer; one whose connection dropped is sent again. The second
     * sending is answered 409 when the first was taken (see `taken`): then null.
     */
    async decide(path, body, signal) {
        let dropped = false;
        for (let attempt = 0; attempt < this.retries; attempt++) {
            let answer;
            try {
                answer = await this.post(path, body, signal);
            }
            catch (error) {
                if (!(error instanceof Unavailable))
                    throw error;
                dropped = true;
                await sleep(100, signal);
                continue;
            }
            if (dropped && taken(answer))
                return null;
            return this.reply(answer);
        }
        throw new Unavailable(`${this.baseUrl} is unreachable`);
    }
    /**
     * The status route's body (null: no such session); a dropped read is asked again, backing
     * off, up to `retries` times.
     */
    async statusOrNull(agent, sessionId, after, wait = 0, signal) {
        let path = `/agents/${encode(agent)}/sessions/${encode(sessionId)}?after=${after}`;
        if (wait > 0)
            path += `&wait=${wait}`;
        let pause = 100;
        for (let attempt = 0;; attempt++) {
            let answer;
            try {
                answer = await read(await this.request(path, { headers: this.headers(), signal }));
            }
            catch (error) {
                if (!(error instanceof Unavailable) || attempt >= this.retries - 1)
                    throw error;
                await sleep(pause, signal);
                pause = Math.min(pause * 2, 2000);
                continue;
            }
            if (answer.status === 404)
                return null;
            if (answer.status >= 400)
                throw errorFor(answer);
            return answer.body;
        }
    }
    /** How many events the session holds (0 for a new one). */
    async sessionNext(agent, sessionId, signal) {
        const status = await this.statusOrNull(agent, sessionId, COUNT_ONLY, 0, signal);
        return status === null ? 0 : status.next;
    }
}
/** An approval or a question the turn waits on; deciding it continues the turn. */
export class Pending {
    event;
    client;
    constructor(event, client) {
        this.event = event;
        this.client = client;
    }
    get id() {
        return this.event.id;
    }
    get kind() {
        return this.event.type === "approval:pending" ? "approval" : "question";
    }
    /** Approve the call (with changed `args`, the fields to change, if the tool allows it). */
    approve(options = {}) {
        return this.client.approve(this.id, options);
    }
    /** Deny the call; the reason reaches the model. */
    deny(reason, options = {}) {
        return this.client.deny(this.id, { ...options, reason });
    }
    answer(text, options = {}) {
        return this.client.answer(this.id, text, options);
    }
}
/** One message's turn: iterate it for its events, once. */
export class Turn {
    agent;
    message;
    /** The session: the one given, else a new id chosen here (the server may answer another). */
    sessionId;
    /** What the turn waits on now (after `approval:pending` / `question:pending`), else null. */
    pending = null;
    /** The turn's `done`, once it came. */
    done = null;
    /** The turn's failure (its `error` event's text), once it came. */
    error = null;
    client;
    signal;
    continuing;
    // The session's events before this turn, and this turn's seen so far: the status route's
    // number of the next one is their sum.
    base = 0;
    seen = 0;
    announced = false;
    started = false;
    constructor(client, agent, message, options) {
        this.client = client;
        this.agent = agent;
        this.message = message;
        this.signal = options.signal;
        this.continuing = Boolean(options.sessionId);
        // Chosen here, so a connection dropped before the first event can resume.
        this.sessionId = options.sessionId || newId();
    }
    /** Why the turn stopped: `done`'s reason, or what it waits on. */
    get stopReason() {
        if (this.done)
            return this.done.stopReason;
        if (this.pending)
            return this.pending.kind === "approval" ? "pending_approval" : "pending_question";
        return undefined;
    }
    async *[Symbol.asyncIterator]() {
        if (this.started)
            throw new BadInput("a turn is iterated once");
        this.started = true;
        // A new session has no events before this turn (and asking would log a 404 in a
        // browser's console); a session continued has them.
        if (this.continuing)
            this.base = await this.client.sessionNext(this.agent, this.sessionId, this.signal);
        if (this.client.transport !== "poll") {
            if (yield* this.sse())
                return;
        }
        yield* this.poll();
    }
    // -- SSE ----------------------------------------------------------------------------------
    /** The turn over SSE; false when the server has no stream (auto falls back). */
    async *sse() {
        const client = this.client;
        const auto = client.transport === "auto";
        const body = JSON.stringify({ message: this.message, sessionId: this.sessionId });
        const init = { method: "POST", headers: client.headers(true), body, signal: this.signal };
        const path = `/agents/${encode(this.agent)}/messages/stream`;
        let response;
        try {
            response = await client.request(path, init, client.streamUrl ?? client.baseUrl);
        }
        catch (error) {
            if (!(error instanceof Unavailable))
                throw error;
            if (auto && client.streamUrl !== null) {
                // a stream function that is not there (not deployed, down, or no CORS for this
                // page): the message never left, so the plain route takes it
                client.transport = "poll";
                return false;
            }
            // the API itself is unreachable, or the answer was lost: the status route retries, then says so
            yield* this.follow();
            return true;
        }
        if (response.status !== 200 || response.body === null) {
            const answer = await read(response);
            if (auto && noRoute(answer)) {
                client.transport = "poll";
                return false;
            }
            throw errorFor(answer);
        }
        try {
            for await (const event of sseEvents(response.body)) {
                yield* this.take(event);
                if (this.done !== null || this.error !== null)
                    return true;
            }
        }
        catch (error) {
            if (aborted(this.signal))
                throw this.signal.reason;
            if (error instanceof SyntaxError)
                throw new Unavailable(`the stream sent a frame that is no JSON (${error.message})`);
            // dropped: the status route has every event from the last one seen on
        }
        yield* this.follow();
        return true;
    }
    // -- long-poll ----------------------------------------------------------------------------
    /**
     * The message posted in the background; its events followed on the status route. The plain
     * route answers when the turn finished or paused; the status route's long-poll has each
     * step's events as it is committed, so they are yielded live.
     */
    async *poll() {
        const body = { message: this.message, sessionId: this.sessionId };
        const posting = new Posting(this.client, `/agents/${encode(this.agent)}/messages`, body, this.signal);
        yield* this.follow(posting);
    }
    /** The turn's events after the last one seen, from the status route, to its end. */
    async *follow(posting) {
        const client = this.client;
        while (this.done === null && this.error === null) {
            const sending = posting !== undefined && posting.running;
            const starting = this.seen === 0;
            // Short while the message may yet be refused: the refusal is the answer.
            const wait = starting && sending ? Math.min(client.wait, 2) : client.wait;
            const after = this.base + this.seen;
            const status = await client.statusOrNull(this.agent, this.sessionId, after, wait, this.signal);
            if (status === null && !starting)
                throw new Absent(`session ${this.sessionId} is gone`, 404);
            const fresh = status?.events ?? [];
            if (starting && fresh.length === 0) {
                const state = status?.status ?? null;
                if (sending) {
                    // nothing to wait on yet (the route answered at once): ask again shortly
                    if (state !== "running")
                        await sleep(SETTLE_MS, this.signal);
                    continue;
                }
                const refused = posting?.refusal();
                if (refused)
                    throw refused;
                if (posting !== undefined && (await this.moved(posting)))
                    continue;
                if (state !== "running")
                    throw new Unavailable(`${client.baseUrl}: the message was lost on its way`);
                continue;
            }
            if (status === null)
                continue; // (starting with no session yet: covered above)
            yield* this.take({ type: "session", sessionId: this.sessionId });
            for (const event of fresh) {
                yield* this.take(event);
                if (this.error !== null)
                    return;
            }
            const caughtUp = status.next === this.base + this.seen;
            if (caughtUp && status.status === "done") {
                const done = { type: "done", text: status.text ?? "" };
                if (status.stopReason === "max_turns" || status.stopReason === "denied")
                    done.stopReason = status.stopReason;
                yield* this.take(done);
            }
            else if (caughtUp && status.status === "idle" && !(posting !== undefined && posting.running)) {
                throw new Unavailable(`session ${this.sessionId}: the turn ended without an answer`);
            }
        }
    }
    /**
     * The server put the message in another session (an agent's `session_id_for` hook): its
     * events are then followed there, from the number of the answer's first.
     */
    async moved(posting) {
        const answer = posting.answer();
        if (answer === null || !answer.sessionId || answer.sessionId === this.sessionId)
            return false;
        this.sessionId = answer.sessionId;
        const next = await this.client.sessionNext(this.agent, this.sessionId, this.signal);
        this.base = next - answer.events.length;
        return true;
    }
    // -- every event goes through here --------------------------------------------------------
    *take(event) {
        if (event.type === "session") {
            if (this.announced)
                return; // one session event per turn, whichever transport said it
            this.announced = true;
            this.sessionId = event.sessionId;
        }
        else if (event.type === "done") {
            this.done = event;
            this.pending = null;
        }
        else {
            // An event of the session's log (an error of a failed turn is logged too).
            this.seen += 1;
            if (event.type === "error") {
                this.error = event.error;
                this.pending = null;
            }
            else if (event.type === "approval:pending" || event.type === "question:pending") {
                this.pending = new Pending(event, this.client);
            }
            else {
                this.pending = null; // the turn went on: it was decided
            }
        }
        yield event;
    }
}
/** `POST path` in the background: its answer, or that its connection dropped. */
class Posting {
    running = true;
    answered = null;
    constructor(client, path, body, signal) {
        const init = { method: "POST", headers: client.headers(true), body: JSON.stringify(body), signal };
        client
            .request(path, init)
            .then(read)
            .then((answer) => {
            this.answered = answer;
        }, 
        // A dropped connection leaves no answer: the turn goes on on the server, and the
        // status route tells it.
        () => undefined)
            .finally(() => {
            this.running = false;
        });
    }
    /** The error the message was answered with, if any. */
    refusal() {
        const answer = this.answered;
        return answer !== null && answer.status >= 400 ? errorFor(answer) : null;
    }
    answer() {
        const answer = this.answered;
        return answer === null || answer.status >= 400 || answer.body === null ? null : answer.body;
    }
}
function trimmed(url) {
    return url.trim().replace(/\/+$/, "");
}
function encode(segment) {
    return encodeURIComponent(segment);
}
function describe(error) {
    if (error instanceof Error) {
        const cause = error.cause;
        return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
    }
    return String(error);
}
