/**
 * Auto-recall before a turn and auto-capture after it.
 *
 * Recall asks vaultsync once for what the agent should know about the person's current message (`GET /context`,
 * with the relevance floor `recallMinScore`) and puts it in front of the prompt, marked so capture can leave it
 * out. Capture appends the person's message and a short answer to today's daily note (`POST /daily`): the raw
 * timeline that `vaultsync extract` and the inbox turn into facts. Neither runs for a turn no person typed
 * (cron, heartbeat, a sub-agent's or another session's message), and what a session captured is never recalled
 * back into that session as memory. Both are bounded in time below OpenClaw's hook budgets and only log when
 * vaultsync is unavailable: the turn always goes on.
 */
import type { Client, ContextAnswer } from "./client.js";
import type { Mode, Settings } from "./config.js";
import { toolNames, WRITE_TOOLS } from "./tools.js";

export const OPEN = "<vaultsync-memory>";
export const CLOSE = "</vaultsync-memory>";
const INJECTED = new RegExp(`${OPEN}[\\s\\S]*?${CLOSE}\\s*`, "g");
const SEEN_TURNS = 200;
const CAPTURED_PER_SESSION = 50;
const SESSIONS = 200;

export interface Logger {
  warn: (message: string) => void;
  info?: (message: string) => void;
}

export interface RecallEvent {
  prompt: string;
  currentUserMessage?: string;
}

export interface TurnContext {
  trigger?: string;
  runId?: string;
  sessionId?: string;
  sessionKey?: string;
  agentId?: string;
  inputProvenance?: { kind?: string; sourceRole?: string };
}

/** Session keys OpenClaw gives to runs no person started: `agent:main:cron:<job>`, `agent:main:subagent:<id>`. */
const AUTOMATED_SESSION = /:(cron|subagent|heartbeat)(:|$)/;

/**
 * Only what a person typed is recalled for and captured: heartbeats, cron wakes, sub-agents and messages from
 * another session carry an agent's own instructions. OpenClaw says so in the trigger, the input's provenance
 * or the session key, depending on the runtime; any one of them is enough.
 */
export function personTurn(ctx: TurnContext): boolean {
  if (ctx.trigger !== undefined && ctx.trigger !== "user") return false;
  const origin = ctx.inputProvenance;
  if (origin && (origin.sourceRole === "subagent" || (origin.kind !== undefined && origin.kind !== "external_user"))) {
    return false;
  }
  return !AUTOMATED_SESSION.test(ctx.sessionKey ?? "");
}

/**
 * What each session's capture wrote to the daily note, so recall in that session does not hand the person's
 * own words back as memory. Kept in memory for the sessions seen last; a restart forgets it, and the lines
 * are then just old memory.
 */
export class Captured {
  private readonly bySession = new Map<string, string[]>();

  add(session: string | undefined, text: string): void {
    if (session === undefined) return;
    const list = this.bySession.get(session) ?? [];
    this.bySession.delete(session);
    this.bySession.set(session, [...list, squash(text)].slice(-CAPTURED_PER_SESSION));
    if (this.bySession.size > SESSIONS) this.bySession.delete(this.bySession.keys().next().value as string);
  }

  /** Whether ``text`` (a recalled piece of a daily note, headings aside) is, or holds, what this session captured. */
  holds(session: string | undefined, text: string): boolean {
    const piece = squash(text.split("\n").filter((line) => !line.startsWith("#")).join(" "));
    const entries = this.bySession.get(session ?? "") ?? [];
    return piece.length > 0 && entries.some((entry) => entry.includes(piece) || piece.includes(entry));
  }
}

function squash(text: string): string {
  return text.replace(/\*\*(Person|Agent):\*\*/g, " ").replace(/\s+/g, " ").trim();
}

/**
 * The context's text without the related-memory lines this session captured; nothing when only its heading
 * would be left. A line of `GET /context` is `- <hit text> (<where>)`, one per hit.
 */
export function withoutOwnLines(found: ContextAnswer, captured: Captured, session: string | undefined): string {
  const own = new Set(
    found.hits.filter((hit) => captured.holds(session, hit.text)).map((hit) => `- ${hit.text.split(/\s+/).join(" ").trim()} (`),
  );
  if (own.size === 0) return found.text;
  const lines = found.text.split("\n").filter((line) => ![...own].some((start) => line.startsWith(start)));
  while (lines.length && lines[lines.length - 1] === "## Related memories") lines.pop();
  return lines.join("\n").trim();
}

export function stripInjected(text: string): string {
  return text.replace(INJECTED, "").trim();
}

function intro(mode: Mode): string {
  return `What long-term memory holds about this message (current facts; use ${toolNames(mode).search} for more):`;
}

export function recallHook(client: Client, settings: Settings, log: Logger, captured: Captured) {
  return async (event: RecallEvent, ctx: TurnContext): Promise<{ prependContext: string } | undefined> => {
    if (!settings.autoRecall || !personTurn(ctx)) return undefined;
    const message = stripInjected(event.currentUserMessage ?? event.prompt);
    if (message.length < settings.recallMinChars) return undefined;
    try {
      const options = { budget: settings.recallBudget, minScore: settings.recallMinScore };
      const found = await client.context(message, options, settings.recallTimeoutMs);
      const text = withoutOwnLines(found, captured, ctx.sessionKey ?? ctx.sessionId);
      if (!text) return undefined;
      return { prependContext: `${OPEN}\n${intro(settings.mode)}\n${text}\n${CLOSE}` };
    } catch (error) {
      log.warn(`vaultsync-memory: recall skipped for this turn: ${(error as Error).message}`);
      return undefined;
    }
  };
}

interface Message {
  role?: string;
  content?: unknown;
  name?: string;
  toolName?: string;
}

interface Part {
  type?: string;
  text?: unknown;
  name?: string;
}

/** The parts of a message's content that are objects: providers and runtimes differ in what else they put there. */
function parts(content: unknown): Part[] {
  return Array.isArray(content) ? content.filter((p): p is Part => typeof p === "object" && p !== null) : [];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return parts(content)
    .map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .join("");
}

/** The tools the turn called: tool calls inside assistant messages, or tool-result messages naming their tool. */
function toolsCalled(messages: Message[]): string[] {
  const names: string[] = [];
  for (const message of messages) {
    for (const part of parts(message.content)) {
      if ((part.type === "toolCall" || part.type === "tool_use") && part.name) names.push(part.name);
    }
    const named = message.toolName ?? (message.role === "tool" || message.role === "toolResult" ? message.name : undefined);
    if (named) names.push(named);
  }
  return names;
}

/** The daily note's entry for a turn: the person's words, then the answer cut at `answerChars`. */
export function turnEntry(messages: unknown[], answerChars: number): string | undefined {
  const list = messages.filter((m): m is Message => typeof m === "object" && m !== null);
  const start = list.map((m) => m.role).lastIndexOf("user");
  if (start < 0) return undefined;
  const turn = list.slice(start);
  if (toolsCalled(turn).some((name) => WRITE_TOOLS.has(name))) return undefined;
  const said = stripInjected(textOf(turn[0].content));
  if (!said) return undefined;
  const reply = turn
    .filter((m) => m.role === "assistant")
    .map((m) => textOf(m.content).trim())
    .filter(Boolean)
    .pop();
  const lines = [`**Person:** ${said}`];
  if (reply && answerChars > 0) {
    const short = reply.length > answerChars ? `${reply.slice(0, answerChars).trimEnd()}…` : reply;
    lines.push(`**Agent:** ${short}`);
  }
  return lines.join("\n\n");
}

export function captureHook(client: Client, settings: Settings, log: Logger, captured: Captured) {
  const seen: string[] = [];
  return async (event: { messages: unknown[]; success: boolean; runId?: string }, ctx: TurnContext): Promise<void> => {
    if (!settings.autoCapture || !event.success || !personTurn(ctx)) return;
    const turn = event.runId ?? ctx.runId;
    if (turn !== undefined) {
      if (seen.includes(turn)) return;
      seen.push(turn);
      if (seen.length > SEEN_TURNS) seen.shift();
    }
    const entry = turnEntry(event.messages, settings.captureAnswerChars);
    if (!entry) return;
    captured.add(ctx.sessionKey ?? ctx.sessionId, entry);
    try {
      await client.as({ agent: ctx.agentId, session: ctx.sessionKey, key: turn }).appendDaily(entry, settings.timeoutMs);
    } catch (error) {
      log.warn(`vaultsync-memory: this turn was not captured in the daily note: ${(error as Error).message}`);
    }
  };
}
