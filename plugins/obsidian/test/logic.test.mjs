// The plugin's pure logic: what the status bar says, which conflicts and held changes are new, the commands a
// held change is answered with, and the event stream's framing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Cancelled, cancellable } from "./.out/api.mjs";
import { parseEvents } from "./.out/events.mjs";
import { answers, heldNotice, heldWhat, newHeld, shellWord } from "./.out/held.mjs";
import { ago, newConflicts, outcome, shown } from "./.out/status.mjs";

const NOW = new Date("2026-12-01T10:00:00Z");
const overview = (extra = {}) => ({
	last_run: { at: "2026-12-01T09:55:00Z", kind: "scheduled", exit_code: 0, summary: "wrote 2 file(s)" },
	last_finished: null,
	open_conflicts: [],
	problems: [],
	...extra,
});

test("relative times stay short", () => {
	assert.equal(ago("2026-12-01T09:59:40Z", NOW), "just now");
	assert.equal(ago("2026-12-01T09:55:00Z", NOW), "5 min ago");
	assert.equal(ago("2026-12-01T07:00:00Z", NOW), "3 h ago");
	assert.equal(ago("2026-11-28T10:00:00Z", NOW), "3 d ago");
	assert.equal(ago("not a time", NOW), "at an unknown time");
});

test("exit codes read as a word", () => {
	assert.deepEqual([0, 1, 3, 5, 70].map(outcome), ["ok", "conflicts", "busy", "problems", "problems"]);
});

test("the status bar: last pass, conflicts, proposed facts", () => {
	const quiet = shown({ reachable: true, overview: overview(), inbox: 0 }, NOW);
	assert.equal(quiet.text, "Vaultsync: synced 5 min ago, ok");
	assert.match(quiet.tooltip, /scheduled, wrote 2 file\(s\)/);
	const busy = shown({ reachable: true, overview: overview({ open_conflicts: ["a.md", "b.md"] }), inbox: 3 }, NOW);
	assert.equal(busy.text, "Vaultsync: synced 5 min ago, ok · 2 conflicts · 3 proposed");
	const never = shown({ reachable: true, overview: overview({ last_run: null }), inbox: 1 }, NOW);
	assert.equal(never.text, "Vaultsync: never synced · 1 proposed");
});

test("unreachable says what to run", () => {
	const down = shown({ reachable: false, reason: "nothing answers at http://127.0.0.1:8765" }, NOW);
	assert.equal(down.text, "Vaultsync not reachable");
	assert.match(down.tooltip, /vaultsync doctor/);
	assert.match(down.tooltip, /vaultsync serve/);
	assert.match(down.tooltip, /nothing answers/);
});

test("only conflicts not seen before are new, and none on the first look", () => {
	assert.deepEqual(newConflicts(null, ["a.md"]), []);
	assert.deepEqual(newConflicts(["a.md"], ["a.md", "b.md"]), ["b.md"]);
	assert.deepEqual(newConflicts(["a.md", "b.md"], ["b.md"]), []);
});

test("events split across chunks are read whole, comments skipped", () => {
	const first = parseEvents(": connected\n\nevent: started\ndata: {\"kind\": \"sync\"}\n\nevent: fini");
	assert.deepEqual(first.events, [{ event: "started", data: '{"kind": "sync"}' }]);
	const second = parseEvents(first.rest + "shed\ndata: {\"kind\": \"sync\",\ndata: \"exit_code\": 0}\n\n");
	assert.deepEqual(second.events, [{ event: "finished", data: '{"kind": "sync",\n"exit_code": 0}' }]);
	assert.equal(second.rest, "");
});

test("a cancelled request settles at once, whatever the transport does", async () => {
	const controller = new AbortController();
	const never = new Promise(() => undefined);
	const pending = cancellable(never, controller.signal);
	controller.abort();
	await assert.rejects(pending, (e) => e instanceof Cancelled);
	assert.equal(await cancellable(Promise.resolve(7), new AbortController().signal), 7);
});

const held = (path, extra = {}) => ({
	path,
	scope: "workspace",
	writer: "agent",
	side: "memory",
	before: 71,
	after: 3,
	unit: "lines",
	rule: "cut the file",
	...extra,
});

test("held changes: counted in the status bar, the run's outcome a word of its own", () => {
	assert.equal(outcome(7), "held");
	const one = shown({ reachable: true, overview: overview({ held: [held("MEMORY.md")] }), inbox: 0 }, NOW);
	assert.equal(one.text, "Vaultsync: synced 5 min ago, ok · 1 change held");
	const two = overview({ held: [held("a.md"), held("b.md")], open_conflicts: ["c.md"] });
	const both = shown({ reachable: true, overview: two, inbox: 2 }, NOW);
	assert.equal(both.text, "Vaultsync: synced 5 min ago, ok · 2 changes held · 1 conflict · 2 proposed");
	assert.match(both.tooltip, /^2 changes held: the other side keeps its copy until you accept or restore$/m);
	const older = shown({ reachable: true, overview: overview(), inbox: 0 }, NOW);
	assert.equal(older.text, "Vaultsync: synced 5 min ago, ok", "a server without `held` holds nothing");
});

test("a held change: what happened, and the two commands that answer it, pasted as one word per path", () => {
	const memory = held("3 Resources/agent/MEMORY.md");
	assert.equal(heldWhat(memory), "agent cut the file (71 → 3 lines)");
	assert.deepEqual(answers(memory), {
		accept: "vaultsync accept '3 Resources/agent/MEMORY.md'",
		restore: "vaultsync restore '3 Resources/agent/MEMORY.md'",
	});
	assert.equal(shellWord("Nora's notes/a.md"), `'Nora'\\''s notes/a.md'`);
});

test("only holds not seen before are new, none on the first look, and a hold that moved in size is the same", () => {
	const memory = held("MEMORY.md");
	assert.deepEqual(newHeld(null, [memory]), []);
	assert.deepEqual(newHeld([memory], [held("MEMORY.md", { after: 1 }), held("Daily/x.md")]), [held("Daily/x.md")]);
	assert.deepEqual(newHeld([memory], []), []);
	const person = held("MEMORY.md", { writer: "person", side: "vault", rule: "deleted the file" });
	assert.deepEqual(newHeld([memory], [person]), [person], "the other side holding the same file is a new hold");
});

test("one notice for the holds a look finds: the file and sizes for one, the files (a few) for more", () => {
	assert.equal(
		heldNotice([held("MEMORY.md")]),
		'A change was held, the other side keeps its copy: MEMORY.md: agent cut the file (71 → 3 lines). Run "Show held changes" to accept or restore.',
	);
	const five = ["a", "b", "c", "d", "e"].map((name) => held(`Daily/${name}.md`));
	assert.match(heldNotice(five), /^5 changes were held, the other side keeps its copy: Daily\/a\.md, Daily\/b\.md, Daily\/c\.md and 2 more\./);
});
