/**
 * The vaultsync HTTP API as typed calls. Every call has a time limit and every failure is a `VaultsyncError`
 * whose `kind` says what the caller can do about it: `down` (nothing listens), `slow` (over the limit),
 * `auth` (the token), `refused` (vaultsync said no, with its reason). Nothing here throws anything else.
 */
import { TokenMissing, type Settings } from "./config.js";

export const CLIENT_NAME = "openclaw";

export type FailureKind = "down" | "slow" | "auth" | "refused" | "busy";

export class VaultsyncError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly status = 0,
  ) {
    super(message);
  }
}

export interface Fact {
  id: string;
  entity: string;
  record: Record<string, unknown> & { fact?: string; status?: string; supersededBy?: string; superseded_by?: string };
  note: string;
  etag: string;
}

export interface Written {
  /** true when vaultsync already held this change (a retry): nothing new was written. */
  already?: boolean;
  fact: Fact | null;
  previous: Fact | null;
  synced: boolean;
  commits: string[];
}

export interface Hit {
  kind: string;
  score?: number;
  lines?: [number, number] | null;
  path: string;
  id: string | null;
  entity: string | null;
  status: string | null;
  superseded_by: string | null;
  vault_path: string | null;
  text: string;
}

export interface ContextAnswer {
  text: string;
  truncated: boolean;
  entities: { entity: string; name: string; facts: { id: string; fact: string }[] }[];
  hits: Hit[];
}

export interface Captured {
  path: string;
  heading: string;
  synced: boolean;
  commits: string[];
}

type Query = Record<string, string | number | undefined>;

/**
 * Who a request is for: the OpenClaw agent and session (vaultsync commits a write with them as `Agent:` and
 * `Session:` trailers, so `vaultsync log` says which conversation put a fact there), and, for a write, the
 * key that makes a retry of the same tool call change memory once (`Idempotency-Key`).
 */
export interface Caller {
  agent?: string;
  session?: string;
  key?: string;
}

/** What vaultsync accepts in the caller headers: visible ASCII without quotes or backslashes, at most 255. */
function headerValue(text: string): string {
  return text.replace(/["\\]|[^!-~]/g, "_").slice(0, 255);
}

export class Client {
  constructor(
    private readonly settings: Pick<Settings, "baseUrl" | "token">,
    private readonly caller: Caller = {},
  ) {}

  /** The same server, asked for `caller` (its fields over this client's). */
  as(caller: Caller): Client {
    return new Client(this.settings, { ...this.caller, ...caller });
  }

  health(timeoutMs: number): Promise<{ ok: boolean; version: string }> {
    return this.call("GET", "/health", { timeoutMs, auth: false });
  }

  status(timeoutMs: number): Promise<Record<string, unknown>> {
    return this.call("GET", "/status", { timeoutMs });
  }

  sync(timeoutMs: number): Promise<{ exit_code: number; summary?: string } & Record<string, unknown>> {
    return this.call("POST", "/sync", { timeoutMs });
  }

  context(message: string, options: { budget: number; minScore: number }, timeoutMs: number): Promise<ContextAnswer> {
    const query = { q: message, budget: options.budget, min_score: options.minScore };
    return this.call("GET", "/context", { query, timeoutMs });
  }

  recall(query: string, options: { limit?: number; entity?: string; activeOnly?: boolean }, timeoutMs: number): Promise<{ hits: Hit[] }> {
    const status = options.activeOnly ? "active" : undefined;
    return this.call("GET", "/recall", { query: { q: query, limit: options.limit, entity: options.entity, status }, timeoutMs });
  }

  fact(id: string, timeoutMs: number, entity?: string): Promise<Fact> {
    return this.call("GET", `/facts/${encodeURIComponent(id)}`, { query: { entity }, timeoutMs });
  }

  remember(body: { entity: string; fact: string; category?: string; create?: boolean }, timeoutMs: number): Promise<Written> {
    return this.call("POST", "/facts", { body: { ...body, source: CLIENT_NAME }, timeoutMs });
  }

  supersede(id: string, change: { fact?: string; by?: string }, timeoutMs: number, entity?: string): Promise<Written> {
    const body = change.fact !== undefined ? { fact: change.fact, source: CLIENT_NAME } : { by: change.by };
    return this.call("POST", `/facts/${encodeURIComponent(id)}/supersede`, { body, query: { entity }, timeoutMs });
  }

  forget(id: string, timeoutMs: number, entity?: string): Promise<Written> {
    return this.call("DELETE", `/facts/${encodeURIComponent(id)}`, { query: { entity }, timeoutMs });
  }

  appendDaily(text: string, timeoutMs: number): Promise<Captured> {
    return this.call("POST", "/daily", { body: { text }, timeoutMs });
  }

  private async call<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown; timeoutMs: number; auth?: boolean },
  ): Promise<T> {
    const url = new URL(this.settings.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined && value !== "") url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { "X-Vaultsync-Client": CLIENT_NAME, Accept: "application/json" };
    const { agent, session, key } = this.caller;
    if (agent) headers["X-Vaultsync-Agent"] = headerValue(agent);
    if (session) headers["X-Vaultsync-Session"] = headerValue(session);
    if (key && method !== "GET") headers["Idempotency-Key"] = headerValue(`openclaw/${agent ?? ""}/${session ?? ""}/${key}`);
    if (options.auth !== false) {
      try {
        headers.Authorization = `Bearer ${this.settings.token()}`;
      } catch (error) {
        if (error instanceof TokenMissing) throw new VaultsyncError("auth", error.message);
        throw error;
      }
    }
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const name = (error as Error).name;
      if (name === "TimeoutError" || name === "AbortError") {
        throw new VaultsyncError("slow", `vaultsync did not answer within ${options.timeoutMs} ms`);
      }
      throw new VaultsyncError("down", `vaultsync is not reachable at ${this.settings.baseUrl}; is \`vaultsync serve\` running?`);
    }
    const payload: unknown = await response.json().catch(() => null);
    if (response.ok) return payload as T;
    throw failure(response.status, payload);
  }
}

function failure(status: number, payload: unknown): VaultsyncError {
  const detail = (payload as { detail?: unknown } | null)?.detail;
  const said = describe(detail) || `HTTP ${status}`;
  if (status === 401) return new VaultsyncError("auth", "vaultsync refused the token; check tokenFile (or token)", status);
  if (status === 503 || (status === 409 && said.includes("try again"))) return new VaultsyncError("busy", said, status);
  return new VaultsyncError("refused", said, status);
}

/** vaultsync's `detail`: a sentence, a list of field errors, or an object with `msg`. */
function describe(detail: unknown): string {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((item: { loc?: unknown[]; msg?: string }) => {
        const field = (item.loc ?? []).filter((part) => part !== "body" && part !== "query").join(".");
        return field ? `${field}: ${item.msg ?? ""}` : (item.msg ?? "");
      })
      .join("; ");
  }
  if (detail && typeof detail === "object" && "msg" in detail) return String(detail.msg);
  return "";
}
