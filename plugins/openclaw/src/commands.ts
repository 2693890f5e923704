/**
 * The person's own ways in: `openclaw vaultsync status|recall|sync` on the command line, and `/remember` and
 * `/recall` in chat. They call the same client as the tools and print what vaultsync said, or why it could not.
 */
import type { Client } from "./client.js";
import type { Settings } from "./config.js";
import { hitLine } from "./tools.js";

interface Program {
  command: (name: string) => Program;
  description: (text: string) => Program;
  argument: (name: string, description?: string) => Program;
  option: (flags: string, description?: string, fallback?: string) => Program;
  action: (run: (...args: never[]) => unknown) => Program;
}

/** `/remember <entity>: <fact>`; the entity as any folder path (`people/sarah-chen: ...`). */
const ENTITY_FACT = /^([a-z0-9][\w.-]*(?:\/[\w.-]+)+)\s*:\s*(.+)$/is;
/**
 * `/remember <entity> <fact>` without the colon, only for a whole folder under life/ (`areas/people/sarah-chen ...`):
 * a note that merely starts with a slash-separated word (`12/06 dentist`) still goes to today's daily note.
 */
const FOLDER_FACT = /^((?:projects|areas|resources|archives)(?:\/[\w.-]+)+)\s+(.+)$/s;

function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

async function guarded(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    process.stderr.write(`vaultsync: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

export function registerCli(program: Program, client: Client, settings: Settings): void {
  const root = program.command("vaultsync").description("Check, search and sync the vaultsync memory");
  root
    .command("status")
    .description("Whether the vaultsync server answers, and its last sync and open conflicts")
    .option("--json", "print vaultsync's answer as JSON")
    .action((options: { json?: boolean }) =>
      guarded(async () => {
        const health = await client.health(settings.timeoutMs);
        const status = await client.status(settings.timeoutMs);
        if (options.json) {
          print(JSON.stringify({ url: settings.baseUrl, health, status }, null, 2));
          return;
        }
        const last = status.last_run as { kind?: string; at?: string; summary?: string } | null | undefined;
        const conflicts = (status.open_conflicts as unknown[] | undefined)?.length ?? 0;
        print(`vaultsync ${health.version} at ${settings.baseUrl}: answering`);
        print(last ? `last sync: ${last.at ?? "?"} (${last.kind ?? "?"}) ${last.summary ?? ""}`.trimEnd() : "last sync: none yet");
        print(`open conflicts: ${conflicts}`);
      }),
    );
  root
    .command("recall")
    .description("Search the memory for plain words")
    .argument("<words...>", "what to look for")
    .option("--limit <n>", "at most this many hits", "8")
    .action((words: string[], options: { limit: string }) =>
      guarded(async () => {
        const found = await client.recall(words.join(" "), { limit: Number(options.limit) || 8 }, settings.timeoutMs);
        print(found.hits.length ? found.hits.map(hitLine).join("\n") : "nothing found");
      }),
    );
  root
    .command("sync")
    .description("Run one sync pass between the memory and the vault")
    .action(() =>
      guarded(async () => {
        const report = await client.sync(settings.timeoutMs);
        print(`sync finished (exit ${report.exit_code})${report.summary ? `: ${report.summary}` : ""}`);
        if (report.exit_code !== 0) process.exitCode = 1;
      }),
    );
}

export interface ChatCommand {
  name: string;
  description: string;
  acceptsArgs: boolean;
  handler: (ctx: { args?: string }) => Promise<{ text: string }>;
}

export function chatCommands(client: Client, settings: Settings): ChatCommand[] {
  const reply = async (run: () => Promise<string>): Promise<{ text: string }> => {
    try {
      return { text: await run() };
    } catch (error) {
      return { text: `vaultsync: ${(error as Error).message}` };
    }
  };
  return [
    {
      name: "remember",
      description: "Keep something in memory: `/remember areas/people/sarah-chen likes tea`, or any text for today's note",
      acceptsArgs: true,
      handler: ({ args }) =>
        reply(async () => {
          const text = (args ?? "").trim();
          if (!text) return "Usage: /remember <entity> <fact>, or /remember <anything to note today>";
          const named = ENTITY_FACT.exec(text) ?? FOLDER_FACT.exec(text);
          if (named) {
            const written = await client.remember({ entity: named[1], fact: named[2].trim() }, settings.timeoutMs);
            return `Remembered ${written.fact?.id ?? ""} in ${named[1]}.`;
          }
          const captured = await client.appendDaily(`**Remember:** ${text}`, settings.timeoutMs);
          return `Noted in ${captured.path}; \`vaultsync extract\` will propose it as a fact.`;
        }),
    },
    {
      name: "recall",
      description: "Search memory: `/recall Sarah's check-in`",
      acceptsArgs: true,
      handler: ({ args }) =>
        reply(async () => {
          const words = (args ?? "").trim();
          if (!words) return "Usage: /recall <words>";
          const found = await client.recall(words, { limit: 5 }, settings.timeoutMs);
          return found.hits.length ? found.hits.map(hitLine).join("\n") : `Nothing in memory matches "${words}".`;
        }),
    },
  ];
}
