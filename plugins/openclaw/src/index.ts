/**
 * The vaultsync-memory plugin: OpenClaw's memory slot backed by a running `vaultsync serve`.
 *
 * Only OpenClaw's types are imported: the entry is a plain definition, so the built plugin runs wherever the
 * host is installed, without resolving the `openclaw` package from the plugin's folder. The settings' schema is
 * the manifest's `configSchema`, which OpenClaw checks before the plugin loads.
 */
import type { OpenClawPluginApi, OpenClawPluginDefinition } from "openclaw/plugin-sdk/plugin-entry";
import { Client } from "./client.js";
import { chatCommands, registerCli } from "./commands.js";
import { settingsFrom } from "./config.js";
import { captureHook, recallHook } from "./hooks.js";
import { memoryTools, TOOL_NAMES } from "./tools.js";

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
    const tools = memoryTools(client, settings);
    api.registerTool(() => tools, { names: TOOL_NAMES });
    api.on("before_prompt_build", recallHook(client, settings, log), {
      timeoutMs: settings.recallTimeoutMs + HOOK_SLACK_MS,
    });
    api.on("agent_end", captureHook(client, settings, log), { timeoutMs: Math.min(settings.timeoutMs + HOOK_SLACK_MS, 29_000) });
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
