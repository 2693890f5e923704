// The plugin's parts against a real `vaultsync serve` on the example memory: the HTTP client, the tools a model
// calls, the recall and capture hooks, and how each behaves when vaultsync is down, slow or refuses.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";
import { Client, VaultsyncError } from "../dist/client.js";
import { chatCommands } from "../dist/commands.js";
import { settingsFrom } from "../dist/config.js";
import { Captured, captureHook, personTurn, recallHook, turnEntry } from "../dist/hooks.js";
import { corpusSupplement } from "../dist/supplement.js";
import { memoryTools, toolNames } from "../dist/tools.js";
import { freePort, makeVault, serve } from "./vaultsync.mjs";

let vault;
let server;
let settings;
let client;
const warnings = [];
const log = { warn: (message) => warnings.push(message) };

before(async () => {
  vault = await makeVault();
  server = await serve(vault);
  settings = settingsFrom({ baseUrl: server.url, tokenFile: vault.tokenFile, recallMinChars: 5 });
  client = new Client(settings);
});

after(async () => {
  await server?.stop();
  vault?.cleanup();
});

function tools() {
  return Object.fromEntries(memoryTools(client, settings).map((tool) => [tool.name, tool]));
}

function today() {
  const now = new Date();
  const pad = (n) => String(n).padStart(2, "0");
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

describe("client", () => {
  test("context names the entity's current facts and never a superseded one", async () => {
    const found = await client.context("Agenda for the meeting with Sarah Chen", { budget: 1500, minScore: 5 }, 10_000);
    assert.equal(found.entities[0].entity, "areas/people/sarah-chen");
    assert.match(found.text, /sarah-chen-005/);
    assert.doesNotMatch(found.text, /sarah-chen-002/);
    assert.ok(found.text.length <= 1500);
  });

  test("a wrong token, an unknown fact, nothing listening and no answer each say what happened", async () => {
    const wrong = new Client({ baseUrl: server.url, token: () => "not-the-token" });
    await assert.rejects(wrong.status(5000), (e) => e instanceof VaultsyncError && e.kind === "auth");
    await assert.rejects(client.fact("no-such-fact", 5000), (e) => e.kind === "refused" && e.status === 404 && /no-such-fact/.test(e.message));
    const nobody = new Client({ baseUrl: `http://127.0.0.1:${await freePort()}`, token: () => "x" });
    await assert.rejects(nobody.status(5000), (e) => e.kind === "down" && /vaultsync serve/.test(e.message));
    const silent = createServer(() => {}); // accepts the connection, never answers
    await new Promise((done) => silent.listen(0, "127.0.0.1", done));
    const stuck = new Client({ baseUrl: `http://127.0.0.1:${silent.address().port}`, token: () => "x" });
    await assert.rejects(stuck.status(300), (e) => e.kind === "slow" && /300 ms/.test(e.message));
    silent.close();
    const missing = new Client(settingsFrom({ baseUrl: server.url, tokenFile: "/nonexistent/token" }));
    await assert.rejects(missing.status(5000), (e) => e.kind === "auth" && /\/nonexistent\/token/.test(e.message));
  });
});

describe("tools", () => {
  test("beside memory-core the tools carry vaultsync's names; as the slot's owner, memory-core's", () => {
    assert.deepEqual(Object.keys(tools()), ["vaultsync_search", "vaultsync_get", "vaultsync_remember", "vaultsync_supersede", "vaultsync_forget"]);
    const slot = memoryTools(client, { ...settings, mode: "slot" }).map((tool) => tool.name);
    assert.deepEqual(slot, Object.values(toolNames("slot")));
    assert.deepEqual(slot, ["memory_search", "memory_get", "memory_remember", "memory_supersede", "memory_forget"]);
    assert.equal(settingsFrom({}).mode, "supplement");
    assert.equal(settingsFrom({ mode: "slot" }).mode, "slot");
  });

  test("remember, search, supersede, get, forget: each round trip, with text and details", async () => {
    const t = tools();
    const made = await t.vaultsync_remember.execute("1", { entity: "areas/people/sarah-chen", fact: "Sarah Chen drinks oolong tea" });
    const id = made.details.fact.id;
    assert.match(made.content[0].text, new RegExp(`Remembered ${id} in areas/people/sarah-chen`));
    const held = JSON.parse(readFileSync(`${vault.life}/areas/people/sarah-chen/items.json`, "utf8"));
    const record = (Array.isArray(held) ? held : held.facts ?? held.items).find((f) => f.id === id);
    assert.equal(record.source, "openclaw");

    const found = await t.vaultsync_search.execute("2", { query: "oolong tea", maxResults: 3 });
    assert.equal(found.details.hits[0].id, id);

    const replaced = await t.vaultsync_supersede.execute("3", { id, fact: "Sarah Chen switched to matcha" });
    const successor = replaced.details.fact.id;
    assert.match(replaced.content[0].text, new RegExp(`${id} is superseded`));
    const old = await t.vaultsync_get.execute("4", { id });
    assert.match(old.content[0].text, new RegExp(`superseded by ${successor}`));
    assert.match(old.content[0].text, /Vault note: .*\.md/);
    const again = await t.vaultsync_search.execute("5", { query: "oolong tea" });
    assert.match(again.content[0].text, /SUPERSEDED by/);

    const gone = await t.vaultsync_forget.execute("6", { id: successor });
    assert.match(gone.content[0].text, /Forgot .*matcha/);
    const clean = await t.vaultsync_search.execute("7", { query: "matcha" });
    assert.ok(clean.details.hits.every((hit) => hit.id !== successor));
  });

  test("a tool call sent again changes memory once: the same call id gets the first answer, a new one 'already'", async () => {
    const t = tools();
    const params = { entity: "areas/people/miguel-ortiz", fact: "Miguel Ortiz keeps a sourdough starter at the office" };
    const first = await t.vaultsync_remember.execute("call-7", params);
    const again = await t.vaultsync_remember.execute("call-7", params);
    assert.equal(again.content[0].text, first.content[0].text);
    assert.match(first.content[0].text, /^Remembered miguel-ortiz-\d+/);
    const retried = await t.vaultsync_remember.execute("call-8", params);
    assert.equal(retried.details.already, true);
    assert.match(retried.content[0].text, new RegExp(`^Already in memory: ${first.details.fact.id} `));
    const raw = JSON.parse(readFileSync(`${vault.life}/areas/people/miguel-ortiz/items.json`, "utf8"));
    const held = Array.isArray(raw) ? raw : (raw.facts ?? raw.items);
    assert.equal(held.filter((f) => f.fact === params.fact).length, 1);
  });

  test("a refused or unreachable call is a result telling the model what to do, not an exception", async () => {
    const t = tools();
    const unknown = await t.vaultsync_forget.execute("1", { id: "no-such-fact" });
    assert.equal(unknown.details.ok, false);
    assert.match(unknown.content[0].text, /Fix the request/);
    const both = await t.vaultsync_supersede.execute("2", { id: "sarah-chen-001" });
    assert.match(both.content[0].text, /exactly one of/);
    const down = memoryTools(new Client({ baseUrl: `http://127.0.0.1:${await freePort()}`, token: () => "x" }), settings);
    const answer = await down[0].execute("3", { query: "Sarah" });
    assert.equal(answer.details.kind, "down");
    assert.match(answer.content[0].text, /unavailable right now; answer without it/);
  });
});

describe("hooks", () => {
  test("recall prepends marked context for a person's message and skips the rest", async () => {
    const recall = recallHook(client, settings, log, new Captured());
    const got = await recall({ prompt: "What do I know about Sarah Chen?" }, { trigger: "user" });
    assert.match(got.prependContext, /^<vaultsync-memory>\n[\s\S]*sarah-chen-001[\s\S]*<\/vaultsync-memory>$/);
    assert.equal(await recall({ prompt: "Sarah Chen status check" }, { trigger: "heartbeat" }), undefined);
    assert.equal(await recall({ prompt: "ok" }, { trigger: "user" }), undefined);
    const down = recallHook(new Client({ baseUrl: `http://127.0.0.1:${await freePort()}`, token: () => "x" }), settings, log, new Captured());
    assert.equal(await down({ prompt: "What about Sarah Chen?" }, {}), undefined);
    assert.match(warnings.at(-1), /recall skipped for this turn/);
  });

  test("nothing is recalled for small talk, creative requests or what memory holds too little about", async () => {
    const recall = recallHook(client, settings, log, new Captured());
    for (const message of ["thanks, that is all for today", "write me a haiku about the sea", "good morning, how are you?"]) {
      assert.equal(await recall({ prompt: message, currentUserMessage: message }, { trigger: "user" }), undefined, message);
    }
    const weak = "When does the DHL shipment arrive?";
    assert.equal(await recall({ prompt: weak }, { trigger: "user" }), undefined);
    const open = recallHook(client, { ...settings, recallMinScore: 0 }, log, new Captured());
    assert.match((await open({ prompt: weak }, { trigger: "user" })).prependContext, /DHL/);
  });

  test("only the current message is recalled for, and only in a turn a person started", async () => {
    const recall = recallHook(client, settings, log, new Captured());
    const earlier = "What do I know about Sarah Chen?\n\nthanks, that is all";
    assert.equal(await recall({ prompt: earlier, currentUserMessage: "thanks, that is all" }, { trigger: "user" }), undefined);
    const ask = "What do I know about Sarah Chen?";
    for (const ctx of [
      { trigger: "cron" },
      { trigger: "heartbeat" },
      { trigger: "memory" },
      { sessionKey: "agent:main:subagent:4f2c" },
      { sessionKey: "agent:main:cron:nightly" },
      { inputProvenance: { kind: "inter_session" } },
      { inputProvenance: { kind: "internal_system" } },
      { inputProvenance: { kind: "external_user", sourceRole: "subagent" } },
    ]) {
      assert.equal(personTurn(ctx), false, JSON.stringify(ctx));
      assert.equal(await recall({ prompt: ask }, ctx), undefined, JSON.stringify(ctx));
    }
    assert.equal(personTurn({ trigger: "user", sessionKey: "agent:main:main", inputProvenance: { kind: "external_user" } }), true);
  });

  test("what a session captured is not recalled back into it, but is memory for another session", async () => {
    const captured = new Captured();
    const capture = captureHook(client, settings, log, captured);
    const recall = recallHook(client, { ...settings, recallMinScore: 0 }, log, captured);
    const said = "The zephyrine kiln firing is booked for the ninth";
    const messages = [{ role: "user", content: said }, { role: "assistant", content: "Noted." }];
    await capture({ messages, success: true, runId: "own-1" }, { sessionKey: "agent:main:main" });
    const same = await recall({ prompt: "zephyrine kiln firing" }, { trigger: "user", sessionKey: "agent:main:main" });
    assert.ok(same === undefined || !same.prependContext.includes("zephyrine"), same?.prependContext);
    const other = await recall({ prompt: "zephyrine kiln firing" }, { trigger: "user", sessionKey: "agent:main:telegram:42" });
    assert.match(other.prependContext, /zephyrine kiln firing/);
  });

  test("capture appends the person's words and a short answer once, without the injected memories", async () => {
    const capture = captureHook(client, { ...settings, captureAnswerChars: 20 }, log, new Captured());
    const messages = [
      { role: "user", content: "an earlier turn" },
      { role: "user", content: [{ type: "text", text: "<vaultsync-memory>\nsarah-chen-001\n</vaultsync-memory>\nBook the Atlas review" }] },
      { role: "assistant", content: [{ type: "text", text: "Booked the Atlas review for Thursday at 10:30 as usual." }] },
    ];
    await capture({ messages, success: true, runId: "run-1" }, {});
    await capture({ messages, success: true, runId: "run-1" }, {});
    await capture({ messages, success: false, runId: "run-2" }, {});
    const note = readFileSync(`${vault.workspace}/memory/${today()}.md`, "utf8");
    assert.equal(note.split("Book the Atlas review").length, 2);
    assert.match(note, /## \d\d:\d\d openclaw\n\n\*\*Person:\*\* Book the Atlas review\n\n\*\*Agent:\*\* Booked the Atlas rev…\n$/);
    assert.doesNotMatch(note, /sarah-chen-001|vaultsync-memory|earlier turn/);
  });

  test("a turn that stored what it learned through the memory tools is not captured again", () => {
    const stored = [
      { role: "user", content: "Sarah moved to Berlin" },
      { role: "assistant", content: [{ type: "toolCall", name: "memory_remember", arguments: {} }] },
      { role: "toolResult", toolName: "memory_remember", content: [{ type: "text", text: "Remembered" }] },
      { role: "assistant", content: [{ type: "text", text: "Noted." }] },
    ];
    assert.equal(turnEntry(stored, 100), undefined);
    assert.match(turnEntry(stored.slice(0, 1), 100), /\*\*Person:\*\* Sarah moved to Berlin/);
  });
});

describe("memory-core corpus supplement", () => {
  test("search answers vaultsync's current facts as corpus hits, get opens one by its id", async () => {
    const supplement = corpusSupplement(client, settings, log.warn);
    const hits = await supplement.search({ query: "Sarah Chen standing meeting", maxResults: 5 });
    assert.ok(hits.length > 0 && hits.length <= 5);
    assert.ok(hits.every((hit) => hit.corpus === "vaultsync" && typeof hit.score === "number" && hit.snippet && hit.path));
    assert.ok(hits.every((hit) => !/Tuesdays at 10:00/.test(hit.snippet))); // sarah-chen-002 is superseded
    const fact = hits.find((hit) => hit.kind === "fact");
    assert.ok(fact?.id, JSON.stringify(hits));
    const doc = await supplement.get({ lookup: fact.id });
    assert.equal(doc.corpus, "vaultsync");
    assert.match(doc.content, new RegExp(`${fact.id} of areas/people/sarah-chen, active`));
    assert.equal(await supplement.get({ lookup: "no-such-fact" }), null);
    assert.equal(await supplement.get({ lookup: "memory/2026-11-27.md" }), null);
    const down = corpusSupplement(new Client({ baseUrl: `http://127.0.0.1:${await freePort()}`, token: () => "x" }), settings, log.warn);
    assert.deepEqual(await down.search({ query: "Sarah" }), []);
    assert.match(warnings.at(-1), /memory search left vaultsync out/);
  });
});

describe("chat commands", () => {
  test("/remember takes `<entity>: <fact>` or `<folder> <fact>`; any other text goes to today's note", async () => {
    const [remember, recall] = chatCommands(client, settings);
    const colon = await remember.handler({ args: "people/li-wei: Li Wei plays the cello" });
    const spaced = await remember.handler({ args: "areas/people/li-wei Li Wei teaches on Saturdays" });
    assert.match(colon.text, /^Remembered li-wei-\d+ in people\/li-wei\.$/);
    assert.match(spaced.text, /^Remembered li-wei-\d+ in areas\/people\/li-wei\.$/);
    const held = JSON.parse(readFileSync(`${vault.life}/areas/people/li-wei/items.json`, "utf8")).map((f) => f.fact);
    assert.ok(held.includes("Li Wei plays the cello") && held.includes("Li Wei teaches on Saturdays"), held.join("\n"));

    const dated = await remember.handler({ args: "12/06 dentist at 3" });
    assert.equal(dated.text, `Noted in memory/${today()}.md; \`vaultsync extract\` will propose it as a fact.`);
    assert.match(readFileSync(`${vault.workspace}/memory/${today()}.md`, "utf8"), /\*\*Remember:\*\* 12\/06 dentist at 3/);
    assert.match((await remember.handler({ args: " " })).text, /^Usage: \/remember <entity> <fact>/);

    const found = await recall.handler({ args: "cello" });
    assert.match(found.text.split("\n")[0], /^- Li Wei plays the cello \(fact li-wei-\d+ of areas\/people\/li-wei\)$/);
  });
});
