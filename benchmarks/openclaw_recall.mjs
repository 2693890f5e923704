// The plugin's auto-recall hook timed from its start to its return, against a running `vaultsync serve`, with
// `GET /context` alone timed in the same run (the vaultsync side of each turn). Started by openclaw_recall.py,
// which gives the server's URL and token and the messages as JSON on standard input.
import { Client } from "../plugins/openclaw/dist/client.js";
import { settingsFrom } from "../plugins/openclaw/dist/config.js";
import { Captured, recallHook } from "../plugins/openclaw/dist/hooks.js";

const messages = JSON.parse(await new Promise((done) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => done(text));
}));
const settings = settingsFrom({ baseUrl: process.env.VAULTSYNC_URL, token: process.env.VAULTSYNC_TOKEN, recallTimeoutMs: 14000 });
const client = new Client(settings);
const warnings = [];
const hook = recallHook(client, settings, { warn: (message) => warnings.push(message) }, new Captured());
const hookMs = [];
const contextMs = [];
let injected = 0;
for (const [i, message] of messages.entries()) {
  // Alternate which goes first, so neither always meets a cache the other warmed.
  const order = i % 2 ? ["context", "hook"] : ["hook", "context"];
  for (const what of order) {
    const started = performance.now();
    if (what === "hook") {
      const result = await hook({ prompt: message }, { trigger: "user" });
      if (result) injected += 1;
      hookMs.push(performance.now() - started);
    } else {
      await client.context(message, { budget: settings.recallBudget, minScore: settings.recallMinScore }, 14000);
      contextMs.push(performance.now() - started);
    }
  }
}
process.stdout.write(JSON.stringify({ hookMs, contextMs, injected, warnings }));
