/**
 * The vaultsync-memory plugin: long-term memory kept by a running `vaultsync serve`, in one of two modes
 * (`mode` in its config; docs/openclaw.md):
 * - `supplement` (the default), beside OpenClaw's own memory-core: vaultsync is a corpus of memory-core's
 *   `memory_search` / `memory_get`, and its own tools are `vaultsync_*`. memory-core keeps the memory slot, so its
 *   dreaming, its flush before compaction and its search go on as before.
 * - `slot`, for a setup where memory-core is disabled: the tools take memory-core's names (`memory_search`, ...).
 *
 * Only OpenClaw's types are imported: the entry is a plain definition, so the built plugin runs wherever the
 * host is installed, without resolving the `openclaw` package from the plugin's folder. The settings' schema is
 * the manifest's `configSchema`, which OpenClaw checks before the plugin loads.
 */
import type { OpenClawPluginApi, OpenClawPluginDefinition } from "openclaw/plugin-sdk/plugin-entry";
import { Client } from "./client.js";
import { chatCommands, registerCli } from "./commands.js";
import { settingsFrom } from "./config.js";
import { Captured, captureHook, recallHook } from "./hooks.js";
import { corpusSupplement } from "./supplement.js";
import { memoryTools, toolNames } from "./tools.js";

/** OpenClaw's per-handler budgets are 15 s (before_prompt_build) and 30 s (agent_end); ours stay well inside. */
const HOOK_SLACK_MS = 500;

const plugin: OpenClawPluginDefinition = {
  id: "vaultsync-memory",
  name: "vaultsync memory",
  description: "Long-term memory kept by vaultsync: recalled before each turn, captured after it, tools on demand.",
  register(api: OpenClawPluginApi) {
    const settings = settingsFrom(api.pluginConfig);
    const client = new Client(settings);
    const log = {
      warn: (message: string) => {
        api.logger.warn(message);
      },
    };
    if (settings.mode === "supplement") api.registerMemoryCorpusSupplement(corpusSupplement(client, settings, log.warn));
    api.registerTool((ctx) => memoryTools(client.as({ agent: ctx.agentId, session: ctx.sessionKey }), settings), {
      names: Object.values(toolNames(settings.mode)),
    });
    const captured = new Captured();
    api.on("before_prompt_build", recallHook(client, settings, log, captured), {
      timeoutMs: settings.recallTimeoutMs + HOOK_SLACK_MS,
    });
    api.on("agent_end", captureHook(client, settings, log, captured), {
      timeoutMs: Math.min(settings.timeoutMs + HOOK_SLACK_MS, 29_000),
    });
    api.registerCli(
      ({ program }) => {
        registerCli(program as never, client, settings);
      },
      {
        descriptors: [{ name: "vaultsync", description: "Check, search and sync the vaultsync memory", hasSubcommands: true }],
      },
    );
    for (const command of chatCommands(client, settings)) api.registerCommand(command);
  },
};

export default plugin;
