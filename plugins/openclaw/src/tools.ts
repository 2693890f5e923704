/**
 * The memory tools. Beside memory-core they carry their own names (`vaultsync_search`, ...), since memory-core
 * keeps `memory_search` and `memory_get`; as the memory slot's owner they take memory-core's names, so prompts
 * that say "run memory_search" keep working. Each returns text a model can act on and the structured answer as
 * `details`; a failure is a result that says what to do next, never a thrown error, so a vaultsync that is down
 * costs the model one sentence, not the turn.
 */
import { Type, type Static, type TSchema } from "typebox";
import type { AnyAgentTool } from "openclaw/plugin-sdk/plugin-entry";
import { VaultsyncError, type Client, type Fact, type Hit, type Written } from "./client.js";
import type { Mode, Settings } from "./config.js";

const VERBS = ["search", "get", "remember", "supersede", "forget"] as const;
type Verb = (typeof VERBS)[number];

/** The tools' names in a mode: `memory_<verb>` as the slot's owner, `vaultsync_<verb>` beside memory-core. */
export function toolNames(mode: Mode): Record<Verb, string> {
  const prefix = mode === "slot" ? "memory" : "vaultsync";
  return Object.fromEntries(VERBS.map((verb) => [verb, `${prefix}_${verb}`])) as Record<Verb, string>;
}

/** The names of the writing tools in either mode: a turn that called one is not captured again. */
export const WRITE_TOOLS = new Set((["slot", "supplement"] as const).flatMap((mode) => {
  const names = toolNames(mode);
  return [names.remember, names.supersede, names.forget];
}));

const Id = Type.String({ minLength: 1, description: "the fact's id, e.g. sarah-chen-004" });
const Entity = Type.String({ minLength: 1, description: "the entity's folder under life/, e.g. areas/people/sarah-chen" });
const Pick = Type.Optional(Type.String({ description: "the entity, only when several entities use the same fact id" }));

const SearchParams = Type.Object({
  query: Type.String({ minLength: 1, description: "plain words to look for; no search syntax" }),
  maxResults: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "at most this many hits (default 8)" })),
  entity: Type.Optional(Type.String({ description: "only this entity and those below it, e.g. areas/people/sarah-chen" })),
});
const GetParams = Type.Object({ id: Id, entity: Pick });
const RememberParams = Type.Object({
  entity: Entity,
  fact: Type.String({ minLength: 1, description: "the fact, one self-contained sentence" }),
  category: Type.Optional(Type.String({ description: "e.g. preference, relationship, milestone, status" })),
  create: Type.Optional(Type.Boolean({ description: "make the entity when it does not exist yet (default false)" })),
});
const SupersedeParams = Type.Object({
  id: Id,
  fact: Type.Optional(Type.String({ minLength: 1, description: "the text of a new fact that replaces it" })),
  by: Type.Optional(Type.String({ minLength: 1, description: "the id of an existing fact of the same entity that replaces it" })),
  entity: Pick,
});
const ForgetParams = Type.Object({ id: Id, entity: Pick });

export interface ToolAnswer {
  content: { type: "text"; text: string }[];
  details: Record<string, unknown>;
}

function answer(text: string, details: Record<string, unknown>): ToolAnswer {
  return { content: [{ type: "text", text }], details };
}

/** What a model should do about a failure: the reason, then the next step. */
export function failed(error: unknown, action: string): ToolAnswer {
  if (!(error instanceof VaultsyncError)) {
    return answer(`Memory ${action} failed unexpectedly (${String(error)}); go on without it.`, { ok: false, error: String(error) });
  }
  const next: Record<string, string> = {
    down: "Memory is unavailable right now; answer without it and do not retry this turn.",
    slow: "Memory is slow right now; answer without it.",
    auth: "Memory is misconfigured (token); tell the person to check the vaultsync-memory plugin's tokenFile.",
    busy: "Memory is busy with a sync; try once more in a moment.",
    refused: "Fix the request as the message says (search memory to find the right id or entity).",
  };
  return answer(`Memory ${action} failed: ${error.message}. ${next[error.kind]}`, {
    ok: false,
    kind: error.kind,
    status: error.status,
    error: error.message,
  });
}

function status(fact: Fact): string {
  const record = fact.record;
  const by = record.supersededBy ?? record.superseded_by;
  return record.status === "superseded" ? `superseded${by ? ` by ${by}` : ""}` : (record.status ?? "active");
}

export function hitLine(hit: Hit): string {
  const text = hit.text.replace(/\s+/g, " ").trim();
  if (hit.kind !== "fact") return `- ${text} (${hit.kind}: ${hit.path})`;
  const old = hit.status === "superseded" ? ` [SUPERSEDED${hit.superseded_by ? ` by ${hit.superseded_by}` : ""}; no longer true]` : "";
  return `- ${text}${old} (fact ${hit.id} of ${hit.entity})`;
}

function writtenText(verb: string, written: Written): string {
  const fact = written.fact;
  if (written.already) {
    return fact ? `Already in memory: ${fact.id} in ${fact.entity}: "${fact.record.fact ?? ""}" (nothing new written).` : "Already done (nothing new written).";
  }
  const sync = written.synced ? "saved and synced to the vault" : "saved; the vault sync is waiting";
  return fact ? `${verb} ${fact.id} in ${fact.entity}: "${fact.record.fact ?? ""}" (${sync}).` : `${verb} (${sync}).`;
}

type Run<P extends TSchema> = (params: Static<P>, callId: string) => Promise<ToolAnswer>;

function tool<P extends TSchema>(name: string, label: string, description: string, parameters: P, run: Run<P>): AnyAgentTool {
  return {
    name,
    label,
    description,
    parameters,
    async execute(callId: string, params: unknown) {
      try {
        return await run(params as Static<P>, callId);
      } catch (error) {
        return failed(error, label.toLowerCase());
      }
    },
  };
}

export function memoryTools(client: Client, settings: Settings): AnyAgentTool[] {
  const limit = settings.timeoutMs;
  const names = toolNames(settings.mode);
  return [
    tool(
      names.search,
      "Search",
      "Search long-term memory (facts about people, companies and projects, their summaries, MEMORY.md and daily notes) " +
        "for plain words. Current facts come first; a superseded one is marked and says what replaced it. Use it before " +
        "answering about the past and before remembering, to avoid duplicates.",
      SearchParams,
      async (params) => {
        const found = await client.recall(params.query, { limit: params.maxResults ?? 8, entity: params.entity }, limit);
        const text = found.hits.length ? found.hits.map(hitLine).join("\n") : `Nothing in memory matches "${params.query}".`;
        return answer(text, { ok: true, query: params.query, hits: found.hits });
      },
    ),
    tool(
      names.get,
      "Read",
      "Read one fact by its id: its text, entity, status (active or superseded, and by what) and its note in the vault.",
      GetParams,
      async (params) => {
        const fact = await client.fact(params.id, limit, params.entity);
        const text = `${fact.id} (${fact.entity}, ${status(fact)}): ${fact.record.fact ?? ""}\nVault note: ${fact.note}`;
        return answer(text, { ok: true, fact });
      },
    ),
    tool(
      names.remember,
      "Remember",
      "Store a new fact about an entity (its folder under life/, e.g. areas/people/sarah-chen). One self-contained " +
        `sentence per fact. When a fact replaces one already known, use ${names.supersede} instead.`,
      RememberParams,
      async (params, callId) => {
        const written = await client.as({ key: callId }).remember(params, limit);
        return answer(writtenText("Remembered", written), { ok: true, ...written });
      },
    ),
    tool(
      names.supersede,
      "Supersede",
      "Mark a fact as no longer true, keeping it as history: give the text of the new fact ('fact') or the id of an " +
        "existing fact that replaces it ('by'), exactly one of the two.",
      SupersedeParams,
      async (params, callId) => {
        if ((params.fact === undefined) === (params.by === undefined)) {
          return answer("Give exactly one of 'fact' (the new text) or 'by' (an existing fact's id).", { ok: false, kind: "refused" });
        }
        const change = { fact: params.fact, by: params.by };
        const written = await client.as({ key: callId }).supersede(params.id, change, limit, params.entity);
        return answer(`${params.id} is superseded. ${writtenText("Now current:", written)}`, { ok: true, ...written });
      },
    ),
    tool(
      names.forget,
      "Forget",
      "Remove a fact that should never have been kept (wrong or private). A fact that simply changed is superseded " +
        "instead. The vault's history keeps a copy.",
      ForgetParams,
      async (params, callId) => {
        const written = await client.as({ key: callId }).forget(params.id, limit, params.entity);
        const text = `Forgot ${params.id}${written.previous ? ` ("${written.previous.record.fact ?? ""}")` : ""}.`;
        return answer(text, { ok: true, ...written });
      },
    ),
  ];
}
