/**
 * vaultsync as a corpus of OpenClaw's own memory search: beside memory-core, `memory_search` with `corpus=all`
 * (or `corpus=vaultsync`) reaches the facts, summaries and notes vaultsync keeps, and `memory_get` opens a fact
 * by the id a hit gave. Superseded facts are left out of search, as in auto-recall: memory-core's results are
 * read as current.
 */
import type { Client, Hit } from "./client.js";
import type { Settings } from "./config.js";

export const CORPUS = "vaultsync";
const DEFAULT_RESULTS = 8;

/** The shapes of the SDK's `MemoryCorpusSupplement` that this plugin fills in. */
export interface CorpusHit {
  corpus: string;
  path: string;
  title?: string;
  kind?: string;
  score: number;
  snippet: string;
  id?: string;
  startLine?: number;
  endLine?: number;
  source?: string;
  provenanceLabel?: string;
}

export interface CorpusDocument {
  corpus: string;
  path: string;
  title?: string;
  kind?: string;
  content: string;
  fromLine: number;
  lineCount: number;
  id?: string;
  provenanceLabel?: string;
}

export interface Supplement {
  search(params: { query: string; maxResults?: number }): Promise<CorpusHit[]>;
  get(params: { lookup: string; fromLine?: number; lineCount?: number }): Promise<CorpusDocument | null>;
}

function corpusHit(hit: Hit): CorpusHit {
  const where = hit.vault_path ?? hit.path;
  return {
    corpus: CORPUS,
    path: where,
    kind: hit.kind,
    score: hit.score ?? 0,
    snippet: hit.text,
    ...(hit.kind === "fact" && hit.id ? { id: hit.id, title: `${hit.id} (${hit.entity ?? ""})` } : {}),
    ...(hit.lines ? { startLine: hit.lines[0], endLine: hit.lines[1] } : {}),
    source: CORPUS,
    provenanceLabel: "vaultsync memory",
  };
}

/**
 * Search and read for memory-core. A vaultsync that is down answers no hits and no document: memory-core's
 * own corpus still answers, and the failure is logged once per call rather than failing the search.
 */
export function corpusSupplement(client: Client, settings: Settings, warn: (message: string) => void): Supplement {
  return {
    async search({ query, maxResults }) {
      try {
        const found = await client.recall(query, { limit: maxResults ?? DEFAULT_RESULTS, activeOnly: true }, settings.timeoutMs);
        return found.hits.map(corpusHit);
      } catch (error) {
        warn(`vaultsync-memory: memory search left vaultsync out: ${(error as Error).message}`);
        return [];
      }
    },
    async get({ lookup }) {
      const id = lookup.startsWith(`${CORPUS}:`) ? lookup.slice(CORPUS.length + 1) : lookup;
      if (!/^[\w.-]+$/.test(id)) return null;
      try {
        const fact = await client.fact(id, settings.timeoutMs);
        const record = fact.record;
        const state = record.status === "superseded" ? `superseded by ${record.supersededBy ?? record.superseded_by ?? "?"}` : "active";
        const content = `${record.fact ?? ""}\n\n(${fact.id} of ${fact.entity}, ${state}; vault note ${fact.note})`;
        return { corpus: CORPUS, path: fact.note, title: fact.id, kind: "fact", content, fromLine: 1, lineCount: content.split("\n").length, id: fact.id, provenanceLabel: "vaultsync memory" };
      } catch (error) {
        if ((error as { status?: number }).status !== 404) warn(`vaultsync-memory: memory get left vaultsync out: ${(error as Error).message}`);
        return null;
      }
    },
  };
}
