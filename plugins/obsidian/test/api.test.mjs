// The API client against a real `vaultsync serve`: every call the plugin makes, and how each failure reaches it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Api, ApiError, Cancelled, Unreachable } from "./.out/api.mjs";
import { follow } from "./.out/events.mjs";
import { TOKEN, fetchTransport, freePort, makeVault, serve } from "./vault.mjs";

const SARAH = "areas/people/sarah-chen";
const NOTE = "2 Areas/people/sarah-chen/facts/sarah-chen-004.md";

describe("the API client against a real server", () => {
	let vault, server, api;

	before(async () => {
		vault = makeVault();
		server = await serve(vault);
		api = new Api(fetchTransport, `${server.url}/`, TOKEN);
	});

	after(async () => {
		await server?.stop();
		vault?.remove();
	});

	test("status, then a sync recorded as the last run", async () => {
		const before = await api.status();
		assert.deepEqual(before.open_conflicts, []);
		assert.deepEqual(before.held, []);
		const report = await api.sync();
		assert.equal(report.exit_code, 0);
		const status = await api.status();
		assert.equal(status.last_run.kind, "api");
		assert.equal(status.last_run.exit_code, 0);
	});

	test("recall puts the current fact first and names its note", async () => {
		const { hits } = await api.recall("Sarah agenda meeting");
		assert.ok(hits.length > 0);
		assert.equal(hits[0].vault_path, NOTE);
		assert.equal(hits[0].status, "active");
	});

	test("a sync is told on the event stream", async () => {
		const controller = new AbortController();
		const seen = [];
		let opened = false;
		const following = follow(fetch, `${server.url}/events?limit=2`, TOKEN, controller.signal, (e) => seen.push(e), () => (opened = true));
		while (!opened) await new Promise((done) => setTimeout(done, 20));
		await api.sync();
		await following;
		assert.deepEqual(seen.map((e) => e.event), ["started", "finished"]);
		assert.equal(JSON.parse(seen[1].data).kind, "sync");
	});

	test("the inbox: accept one, reject another, and a stale one is refused with 412", async () => {
		const propose = async (fact) => {
			const response = await fetchTransport({
				url: `${server.url}/facts`,
				method: "POST",
				headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
				body: JSON.stringify({ entity: SARAH, fact, status: "proposed" }),
			});
			assert.equal(response.status, 201);
		};
		await propose("Sarah Chen swims on Fridays");
		await propose("Sarah Chen learns Portuguese");
		const [first, second] = await api.inbox();
		assert.equal(first.record.fact, "Sarah Chen swims on Fridays");

		const note = vault.read(first.note);
		vault.write(first.note, note.replace("status: proposed", "status: proposed\ncategory: sport"));
		await assert.rejects(api.decide(first, "accept"), (e) => e instanceof ApiError && e.status === 412);
		const [fresh] = await api.inbox();
		await api.decide(fresh, "accept");
		await api.decide(second, "reject");

		const held = Object.fromEntries(vault.items(SARAH).map((f) => [f.fact, f.status]));
		assert.equal(held["Sarah Chen swims on Fridays"], "active");
		assert.equal(held["Sarah Chen learns Portuguese"], "rejected");
		assert.deepEqual(await api.inbox(), []);
	});

	test("a conflict is listed beside its note and resolved as mine", async () => {
		vault.write(NOTE, vault.read(NOTE).replace(/^category: .*$/m, "category: habit"));
		const doc = vault.items(SARAH);
		doc.find((f) => f.id === "sarah-chen-004").category = "routine";
		vault.writeItems(SARAH, doc);
		const report = await api.sync();
		assert.equal(report.exit_code, 1);

		const [conflict, ...rest] = await api.conflicts();
		assert.deepEqual(rest, []);
		assert.equal(conflict.note, NOTE);
		assert.ok(conflict.copy.includes(".vaultsync-conflict-"));
		assert.match(vault.read(conflict.copy), /^category: habit$/m);

		const done = await api.resolve(conflict, "mine");
		assert.deepEqual(done.open_conflicts, []);
		assert.equal(vault.exists(conflict.copy), false);
		assert.match(vault.read(NOTE), /^category: habit$/m);
		assert.equal(vault.items(SARAH).find((f) => f.id === "sarah-chen-004").category, "habit");
		assert.deepEqual(await api.conflicts(), []);
	});

	test("a note's history and the latest review note", async () => {
		const changes = await api.history(NOTE);
		assert.ok(changes.some((c) => c.side === "person"), JSON.stringify(changes));
		assert.equal(await api.latestReview(), null);
	});

	test("a wrong token is a 401 and a cancelled request is Cancelled", async () => {
		const wrong = new Api(fetchTransport, server.url, "wrong");
		await assert.rejects(wrong.status(), (e) => e instanceof ApiError && e.status === 401);
		const controller = new AbortController();
		const pending = api.status(controller.signal);
		controller.abort();
		await assert.rejects(pending, (e) => e instanceof Cancelled);
	});
});

test("nothing listening is Unreachable, naming the address", async () => {
	const url = `http://127.0.0.1:${await freePort()}`;
	const api = new Api(fetchTransport, url, TOKEN);
	await assert.rejects(api.status(), (e) => e instanceof Unreachable && e.message.includes(url));
});
