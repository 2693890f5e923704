/**
 * Auto-recall before a turn and auto-capture after it.
 *
 * Recall asks vaultsync once for what the agent should know about the person's message (`GET /context`) and puts
 * it in front of the prompt, marked so capture can leave it out. Capture appends the person's message and a short
 * answer to today's daily note (`POST /daily`): the raw timeline that `vaultsync extract` and the inbox turn into
 * facts. Both are bounded in time below OpenClaw's hook budgets and only log when vaultsync is unavailable: the
 * turn always goes on.
 */
import type { Client } from "./client.js";
import type { Settings } from "./config.js";

export const OPEN = "<vaultsync-memory>";
export const CLOSE = "</vaultsync-memory>";
const WRITES = new Set(["memory_remember", "memory_supersede", "memory_forget"]);
const INJECTED = new RegExp(`${OPEN}[\\s\\S]*?${CLOSE}\\s*`, "g");
const SEEN_TURNS = 200;

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
}

/** Only what a person typed is recalled for: heartbeats and cron wakes carry the agent's own instructions. */
function personTurn(ctx: TurnContext): boolean {
  return ctx.trigger === undefined || ctx.trigger === "user";
}

export function stripInjected(text: string): string {
  return text.replace(INJECTED, "").trim();
}

export function recallHook(client: Client, settings: Settings, log: Logger) {
  return async (event: RecallEvent, ctx: TurnContext): Promise<{ prependContext: string } | undefined> => {
    if (!settings.autoRecall || !personTurn(ctx)) return undefined;
    const message = stripInjected(event.currentUserMessage ?? event.prompt);
    if (message.length < settings.recallMinChars) return undefined;
    try {
      const found = await client.context(message, settings.recallBudget, settings.recallTimeoutMs);
      if (!found.text) return undefined;
      const intro = "What long-term memory holds about this message (current facts; use memory_search for more):";
      return { prependContext: `${OPEN}\n${intro}\n${found.text}\n${CLOSE}` };
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
  if (toolsCalled(turn).some((name) => WRITES.has(name))) return undefined;
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

export function captureHook(client: Client, settings: Settings, log: Logger) {
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
    try {
      await client.appendDaily(entry, settings.timeoutMs);
    } catch (error) {
      log.warn(`vaultsync-memory: this turn was not captured in the daily note: ${(error as Error).message}`);
    }
  };
}
