/**
 * The protocol's LoopEvent types, generated from protocol/loop-event.schema.json by
 * `npm run generate` (json-schema-to-typescript). Do not edit: change the schema (it comes
 * from signoff/events.py, `signoff schema`) and generate again; a test fails when they differ.
 */

/**
 * One event of a signoff turn (protocol v1).
 */
export type LoopEvent =
  | BudgetCheck
  | PromptCompaction
  | AssistantText
  | ActauthDecision
  | ToolStarted
  | ToolResult
  | ToollaneResult
  | SkillLoaded
  | LoopSkipped
  | LoopMaxTurns
  | LoopDenied
  | LoopDone
  | SessionEvent
  | ApprovalPending
  | QuestionPending
  | Done
  | ErrorEvent;

export interface BudgetCheck {
  type: "budget:check";
  action: "ok" | "nudge" | "over_hard_limit";
  usedTokens: number;
  budgetTokens: number;
  ratio: number;
  nudge?: string;
}
export interface PromptCompaction {
  type: "prompt:compaction";
  from: number;
  to: number;
}
export interface AssistantText {
  type: "assistant:text";
  text: string;
}
export interface ActauthDecision {
  type: "actauth:decision";
  tool: string;
  decision: "allow" | "ask" | "deny";
  reason: string;
}
export interface ToolStarted {
  type: "tool:started";
  id: string;
  tool: string;
  args: {
    [k: string]: unknown;
  };
  detailText: string;
  originalArgs?: {
    [k: string]: unknown;
  };
}
export interface ToolResult {
  type: "tool:result";
  id: string;
  tool: string;
  args?: {
    [k: string]: unknown;
  };
  detailText?: string;
  statusText: string;
}
export interface ToollaneResult {
  type: "toollane:result";
  name: string;
  summary: string;
}
export interface SkillLoaded {
  type: "skill:loaded";
  skill: string;
}
export interface LoopSkipped {
  type: "loop:skipped";
  name: string;
  deniedTools: string[];
}
export interface LoopMaxTurns {
  type: "loop:max_turns";
  maxTurns: number;
}
export interface LoopDenied {
  type: "loop:denied";
  deniedTools: string[];
}
export interface LoopDone {
  type: "loop:done";
  text: string;
  refused?: "refusal" | "content_filtered" | "guardrail_intervened";
}
export interface SessionEvent {
  type: "session";
  sessionId: string;
}
export interface ApprovalPending {
  type: "approval:pending";
  id: string;
  tool: string;
  args: {
    [k: string]: unknown;
  };
  scope: PendingScope;
  reason: string;
  requestedAt: string;
}
export interface PendingScope {
  tenant: string;
  environment: string;
  agent: string;
}
export interface QuestionPending {
  type: "question:pending";
  id: string;
  question: string;
  options?: string[];
  agent: string;
  sessionId?: string;
  requestedAt: string;
}
export interface Done {
  type: "done";
  text: string;
  stopReason?: "max_turns" | "denied";
}
export interface ErrorEvent {
  type: "error";
  error: string;
}
