/**
 * The plugin's settings, read once from `plugins.entries.vaultsync-memory.config`. OpenClaw has already checked
 * them against the manifest's schema; this fills in defaults and finds the token, so the rest of the plugin
 * works with one typed value.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * `supplement` (the default) runs beside OpenClaw's own memory-core: vaultsync is a corpus memory-core's
 * `memory_search` reaches, and its tools carry their own names. `slot` replaces memory-core: the tools take
 * memory-core's names, for a setup where memory-core is disabled.
 */
export type Mode = "supplement" | "slot";

export interface Settings {
  mode: Mode;
  baseUrl: string;
  token: () => string;
  autoRecall: boolean;
  recallBudget: number;
  recallMinChars: number;
  recallMinScore: number;
  recallTimeoutMs: number;
  autoCapture: boolean;
  captureAnswerChars: number;
  timeoutMs: number;
}

export const DEFAULT_TOKEN_FILE = "~/.config/vaultsync/config.token";

function pick<T>(raw: Record<string, unknown>, key: string, kind: "string" | "number" | "boolean", fallback: T): T {
  const value = raw[key];
  return typeof value === kind ? (value as T) : fallback;
}

export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

/**
 * The token is read when a request is made, not at load time: `vaultsync init` may run after OpenClaw started,
 * and a token file rewritten by hand is picked up without a restart.
 */
function tokenReader(raw: Record<string, unknown>): () => string {
  const given = pick(raw, "token", "string", "").trim();
  if (given) return () => given;
  const file = expandHome(pick(raw, "tokenFile", "string", DEFAULT_TOKEN_FILE));
  return () => {
    try {
      return readFileSync(file, "ascii").trim();
    } catch (error) {
      throw new TokenMissing(`cannot read the token file ${file} (${(error as Error).message})`);
    }
  };
}

export class TokenMissing extends Error {}

export function settingsFrom(raw: Record<string, unknown> | undefined): Settings {
  const given = raw ?? {};
  return {
    mode: pick<string>(given, "mode", "string", "supplement") === "slot" ? "slot" : "supplement",
    baseUrl: pick(given, "baseUrl", "string", "http://127.0.0.1:8765").replace(/\/+$/, ""),
    token: tokenReader(given),
    autoRecall: pick(given, "autoRecall", "boolean", true),
    recallBudget: pick(given, "recallBudget", "number", 2000),
    recallMinChars: pick(given, "recallMinChars", "number", 12),
    recallMinScore: pick(given, "recallMinScore", "number", 5),
    recallTimeoutMs: pick(given, "recallTimeoutMs", "number", 1500),
    autoCapture: pick(given, "autoCapture", "boolean", true),
    captureAnswerChars: pick(given, "captureAnswerChars", "number", 400),
    timeoutMs: pick(given, "timeoutMs", "number", 30000),
  };
}
