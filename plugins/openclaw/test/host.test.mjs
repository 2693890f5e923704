// The plugin inside the real OpenClaw (the version pinned in package.json), offline: installed with
// `plugins install --link` beside memory-core (enabled, as OpenClaw ships), inspected and checked by
// `plugins doctor`, then whole agent turns with `openclaw agent --local` against the fake model and a real
// `vaultsync serve` on a copy of the example memory; then the same plugin as the memory slot's owner.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { startFakeModel } from "./fake-model.mjs";
import { freePort, makeVault, serve } from "./vaultsync.mjs";

const PLUGIN = resolve(import.meta.dirname, "..");
const OPENCLAW = join(PLUGIN, "node_modules/.bin/openclaw");
const SARAH = "areas/people/sarah-chen";

let home;
let vault;
let server;
let model;
let gateway;

function openclaw(...args) {
  const env = { ...process.env, OPENCLAW_HOME: home, HOME: home, NO_COLOR: "1" };
  return new Promise((done) => {
    execFile(OPENCLAW, args, { env, cwd: home, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      done({ code: error ? (error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function turn(message) {
  const seen = model.requests.length;
  const result = await openclaw("agent", "--local", "--agent", "main", "-m", message, "--json");
  assert.equal(result.code, 0, result.stderr);
  const reply = JSON.parse(result.stdout).payloads.map((p) => p.text).join("\n");
  return { ...result, reply, requests: model.requests.slice(seen) };
}

/** Everything the person's side of a model request says (OpenClaw adds its own context as user messages too). */
function userText(request) {
  const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join(""));
  return request.messages.filter((m) => m.role === "user").map(text).join("\n");
}

/**
 * The Gateway on a free loopback port, as a person runs it: chat commands (`/remember`, `/recall`) are handled
 * by its slash-command dispatcher, which `openclaw agent` does not run. It holds the state lock while it runs, so
 * `agent --local` turns wait until `stop()`.
 */
async function startGateway() {
  const path = join(home, ".openclaw/openclaw.json");
  const config = JSON.parse(readFileSync(path, "utf8"));
  config.gateway = { ...config.gateway, mode: "local" };
  writeFileSync(path, JSON.stringify(config, null, 2));
  const [port, token] = [await freePort(), randomUUID()];
  const env = { ...process.env, OPENCLAW_HOME: home, HOME: home, NO_COLOR: "1", OPENCLAW_DISABLE_BONJOUR: "1" }; // nothing on the LAN
  const child = spawn(OPENCLAW, ["gateway", "run", "--port", String(port), "--bind", "loopback", "--auth", "token", "--token", token], {
    env,
    cwd: home,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let said = "";
  child.stdout.on("data", (chunk) => (said += chunk));
  child.stderr.on("data", (chunk) => (said += chunk));
  const deadline = Date.now() + 120_000; // waiting for start-up, not a measurement
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited ${child.exitCode}: ${said}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`gateway did not get ready: ${said}`);
    await new Promise((done) => setTimeout(done, 250));
  }
  // What `openclaw gateway call <method> --url --token --json` runs, in this process: one load of OpenClaw's
  // client instead of a CLI start-up for every call and every poll. Its settings are read from the test's home.
  Object.assign(process.env, { OPENCLAW_HOME: home, HOME: home });
  const { callGatewayFromCli } = await import("openclaw/plugin-sdk/gateway-runtime");
  const call = (method, params) =>
    callGatewayFromCli(method, { url: `ws://127.0.0.1:${port}`, token, json: true, timeout: "10000" }, params, { sharedStateMode: "read-only" });
  const stop = () =>
    new Promise((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once("exit", done);
      child.kill("SIGTERM");
    });
  return { call, stop };
}

/** Sends one chat message through the Gateway, as the Control UI's chat does, and waits for the answer to it. */
async function chat(message) {
  const idempotencyKey = randomUUID();
  const sent = await gateway.call("chat.send", { sessionKey: "main", message, idempotencyKey });
  assert.equal(sent.status, "started", JSON.stringify(sent));
  const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join(""));
  const deadline = Date.now() + 60_000; // waiting for the answer, not a measurement
  for (;;) {
    const history = await gateway.call("chat.history", { sessionKey: "main" });
    const answer = history.messages.find((m) => m.role === "assistant" && m.idempotencyKey === idempotencyKey);
    if (answer) return text(answer);
    assert.ok(Date.now() < deadline, `no answer to ${message}: ${JSON.stringify(history.messages.slice(-3))}`);
    await new Promise((done) => setTimeout(done, 500));
  }
}

function today() {
  const now = new Date();
  const pad = (n) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/**
 * The plugin folder as a person who runs OpenClaw from its own install has it: the built package and its one
 * runtime dependency. The tests run the OpenClaw in this folder's node_modules, whose bundled plugins would
 * otherwise sit inside the linked folder and make OpenClaw refuse it as a package holding several plugins.
 */
function checkout() {
  const dir = join(home, "vaultsync-memory");
  for (const name of ["package.json", "openclaw.plugin.json", "dist", "node_modules/typebox"]) {
    cpSync(join(PLUGIN, name), join(dir, name), { recursive: true });
  }
  return dir;
}

before(async () => {
  home = mkdtempSync(join(tmpdir(), "openclaw-home-"));
  mkdirSync(join(home, "workspace"));
  [vault, model] = await Promise.all([makeVault(), startFakeModel()]);
  server = await serve(vault);
});

after(async () => {
  await gateway?.stop();
  await server?.stop();
  await model?.close();
  vault?.cleanup();
  if (home) rmSync(home, { recursive: true, force: true });
});

function readConfig() {
  return JSON.parse(readFileSync(join(home, ".openclaw/openclaw.json"), "utf8"));
}

function writeConfig(config) {
  writeFileSync(join(home, ".openclaw/openclaw.json"), JSON.stringify(config, null, 2));
}

async function inspect() {
  const inspected = await openclaw("plugins", "inspect", "vaultsync-memory", "--runtime", "--json");
  assert.equal(inspected.code, 0, inspected.stderr);
  return JSON.parse(inspected.stdout);
}

/**
 * The `openclaw ...` lines of a shell block in docs/openclaw.md that follows `after`, as argument lists, with the
 * test's plugin folder, server URL and token file in place of the doc's `"$PWD"` and defaults.
 */
function docLines(after, dir) {
  const doc = readFileSync(join(PLUGIN, "../../docs/openclaw.md"), "utf8");
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf(after)))[1];
  const put = { '"$PWD"': dir, "http://127.0.0.1:8765": server.url, "~/.config/vaultsync/config.token": vault.tokenFile };
  return block
    .split("\n")
    .filter((line) => line.startsWith("openclaw "))
    .map((line) => line.split(/\s+/).slice(1).map((word) => put[word] ?? word));
}

async function runDocLines(after, dir) {
  const lines = docLines(after, dir);
  assert.ok(lines.length > 0, `no openclaw lines after ${after} in docs/openclaw.md`);
  for (const args of lines) {
    const done = await openclaw(...args);
    assert.equal(done.code, 0, `openclaw ${args.join(" ")}: ${done.stdout}${done.stderr}`);
  }
}

test("installed beside memory-core by the doc's lines: a corpus supplement with its own tool names, doctor clean", async () => {
  await runDocLines("## Install", checkout());
  await runDocLines("## Configure", "");
  const config = readConfig();
  assert.equal(config.plugins.slots?.memory ?? "memory-core", "memory-core"); // memory-core keeps the slot
  const entry = config.plugins.entries["vaultsync-memory"];
  assert.deepEqual(entry.hooks, { allowConversationAccess: true });
  assert.deepEqual(entry.config, { baseUrl: server.url, tokenFile: vault.tokenFile });
  const fake = { id: "fake-model", name: "Fake", reasoning: false, input: ["text"], contextWindow: 64000, maxTokens: 4000 };
  config.models = { mode: "replace", providers: { fake: { baseUrl: model.url, api: "openai-completions", apiKey: "fake", models: [fake] } } };
  config.agents = { defaults: { model: { primary: "fake/fake-model" }, workspace: join(home, "workspace") } };
  config.tools = { toolSearch: false };
  writeConfig(config);

  const [report, doctor] = await Promise.all([inspect(), openclaw("plugins", "doctor")]); // both only read
  assert.equal(report.plugin.status, "loaded");
  assert.equal(report.plugin.kind, undefined);
  assert.deepEqual(report.diagnostics.filter((d) => d.level === "error"), []);
  assert.deepEqual(report.typedHooks.map((h) => h.name).sort(), ["agent_end", "before_prompt_build"]);
  assert.deepEqual(report.tools.flatMap((t) => t.names).sort(), [
    "vaultsync_forget",
    "vaultsync_get",
    "vaultsync_remember",
    "vaultsync_search",
    "vaultsync_supersede",
  ]);
  assert.deepEqual(report.commands.sort(), ["recall", "remember"]);
  assert.deepEqual(report.cliCommands, ["vaultsync"]);
  assert.equal(report.policy.allowConversationAccess, true);
  assert.equal(doctor.code, 0, doctor.stderr);
  assert.doesNotMatch(doctor.stdout, /vaultsync-memory|conflict/i);
});

test("a person's message gets the memory injected before the model sees it, and the turn lands in today's note", async () => {
  const done = await turn("What should I prepare for my meeting with Sarah Chen?");
  const first = userText(done.requests[0]);
  assert.match(first, /<vaultsync-memory>[\s\S]*## Sarah Chen \(areas\/people\/sarah-chen\)[\s\S]*<\/vaultsync-memory>/);
  assert.match(first, /Thursdays at 10:30 \[sarah-chen-005\]/);
  assert.doesNotMatch(first, /sarah-chen-002/); // superseded: never shown as current
  const note = readFileSync(join(vault.workspace, `memory/${today()}.md`), "utf8");
  assert.match(note, /## \d\d:\d\d openclaw\n\n\*\*Person:\*\* What should I prepare for my meeting with Sarah Chen\?\n\n\*\*Agent:\*\* Noted, thank you\./);
  assert.doesNotMatch(note, /vaultsync-memory|sarah-chen-005/);
});

test("every vaultsync tool's round trip inside one turn, memory-core's search reaching vaultsync, and the CLI", async () => {
  const calls = [
    `CALL memory_search {"query":"Sarah Chen written agenda","corpus":"all"}`,
    `CALL vaultsync_remember {"entity":"${SARAH}","fact":"Sarah Chen drinks oolong tea"}`,
    `CALL vaultsync_search {"query":"oolong tea","maxResults":3}`,
    `CALL vaultsync_supersede {"id":"sarah-chen-007","fact":"Sarah Chen switched to matcha"}`,
    `CALL vaultsync_get {"id":"sarah-chen-007"}`,
    `CALL vaultsync_search {"query":"matcha"}`,
    `CALL vaultsync_forget {"id":"sarah-chen-008"}`,
    `CALL vaultsync_search {"query":"matcha"}`,
  ];
  const done = await turn(`Please update memory.\n${calls.join("\n")}`);
  const [core, ...results] = done.reply.split(/\n(?=\[\d+\] )/);
  assert.equal(results.length, 7, done.reply);
  assert.match(core, /Sarah Chen prefers a written agenda the day before any meeting/); // memory-core's tool, vaultsync's fact
  assert.match(results[0], /Remembered sarah-chen-007 in areas\/people\/sarah-chen/);
  assert.match(results[1], /oolong tea \(fact sarah-chen-007 of areas\/people\/sarah-chen\)/);
  assert.match(results[2], /sarah-chen-007 is superseded\. Now current: sarah-chen-008/);
  assert.match(results[3], /sarah-chen-007 \(areas\/people\/sarah-chen, superseded by sarah-chen-008\)/);
  assert.match(results[4], /^\[6\] - Sarah Chen switched to matcha \(fact sarah-chen-008/);
  assert.match(results[5], /Forgot sarah-chen-008/);
  assert.doesNotMatch(results[6], /sarah-chen-008/);
  const note = readFileSync(join(vault.workspace, `memory/${today()}.md`), "utf8");
  assert.doesNotMatch(note, /Please update memory/); // stored through the tools: not captured again
  const body = await new Promise((done) =>
    execFile("git", ["-C", vault.vault, "log", "--format=%an|%B", "-S", "Sarah Chen drinks oolong tea"], { env: vault.env }, (error, stdout) =>
      done(error ? "" : stdout),
    ),
  );
  assert.match(body, /^vaultsync api \(openclaw\)\|/m);
  assert.match(body, /^Agent: main$/m); // which conversation put the fact there
  assert.match(body, /^Session: agent:main:main$/m);

  const [status, recalled] = await Promise.all([openclaw("vaultsync", "status"), openclaw("vaultsync", "recall", "oolong", "tea")]);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /answering/);
  assert.match(recalled.stdout, /SUPERSEDED by sarah-chen-008/);
});

test("/remember and /recall sent as chat messages through the Gateway write and find the fact", async () => {
  gateway = await startGateway();
  try {
    const fact = "Sarah Chen prefers jasmine tea after lunch";
    const remembered = await chat(`/remember ${SARAH} ${fact}`);
    const id = /^Remembered (sarah-chen-\d+) in areas\/people\/sarah-chen\.$/.exec(remembered)?.[1];
    assert.ok(id, remembered);
    const items = JSON.parse(readFileSync(join(vault.life, SARAH, "items.json"), "utf8"));
    assert.deepEqual(
      items.filter((item) => item.fact === fact).map(({ id, source, status }) => ({ id, source, status })),
      [{ id, source: "openclaw", status: "active" }],
    );
    const committed = await new Promise((done) =>
      execFile("git", ["-C", vault.vault, "log", "--format=%an|%s", "-S", fact], { env: vault.env }, (error, stdout) => done(error ? "" : stdout)),
    );
    assert.equal(committed, "vaultsync api (openclaw)|memory -> vault: people/sarah-chen +1 fact\n");

    const recalled = await chat("/recall jasmine tea");
    assert.match(recalled.split("\n")[0], new RegExp(`^- ${fact} \\(fact ${id} of areas/people/sarah-chen\\)$`));
  } finally {
    await gateway.stop();
  }
});

test("as the memory slot's owner by the doc's lines: memory-core off, its tool names, the same round trip", async () => {
  await runDocLines("For `slot` mode, also:", "");
  const config = readConfig();
  assert.equal(config.plugins.slots.memory, "vaultsync-memory");
  assert.equal(config.plugins.entries["memory-core"].enabled, false);
  assert.equal(config.plugins.entries["vaultsync-memory"].config.mode, "slot");
  const [report, doctor] = await Promise.all([inspect(), openclaw("plugins", "doctor")]); // both only read
  assert.equal(report.plugin.status, "loaded");
  assert.deepEqual(report.tools.flatMap((t) => t.names).sort(), ["memory_forget", "memory_get", "memory_remember", "memory_search", "memory_supersede"]);
  assert.equal(doctor.code, 0, doctor.stderr);
  assert.doesNotMatch(doctor.stdout, /vaultsync-memory/);

  const calls = [
    `CALL memory_remember {"entity":"${SARAH}","fact":"Sarah Chen keeps a bonsai on her desk"}`,
    `CALL memory_search {"query":"bonsai desk","maxResults":3}`,
  ];
  const done = await turn(`What should I prepare for my meeting with Sarah Chen?\n${calls.join("\n")}`);
  assert.match(done.reply, /Remembered sarah-chen-\d+ in areas\/people\/sarah-chen/);
  assert.match(done.reply, /bonsai on her desk \(fact sarah-chen-\d+ of areas\/people\/sarah-chen\)/);
  const injected = /<vaultsync-memory>\n(.*)\n[\s\S]*?<\/vaultsync-memory>/.exec(userText(done.requests[0]));
  assert.equal(injected?.[1], "What long-term memory holds about this message (current facts; use memory_search for more):");
  assert.match(injected[0], /sarah-chen/);
});

test("with vaultsync stopped the turn still answers, says so in the tool result and logs a warning", async () => {
  await server.stop();
  const [done, status] = await Promise.all([turn('Anything about Sarah Chen?\nCALL memory_search {"query":"Sarah Chen"}'), openclaw("vaultsync", "status")]);
  assert.match(done.reply, /unavailable right now; answer without it/);
  assert.match(done.stdout + done.stderr, /recall skipped for this turn/);
  assert.doesNotMatch(userText(done.requests[0]), /vaultsync-memory/);
  assert.equal(status.code, 1);
  assert.match(status.stderr, /not reachable/);
});
