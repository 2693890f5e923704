// The built main.js, loaded with a small stand-in for the `obsidian` module (the app itself cannot run here):
// its commands are registered, the status bar shows the real state, "Sync now" runs a pass on a real server,
// a new conflict gets a notice, a held change is counted and listed with the commands that answer it, and a
// server that went away is shown as such.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { TOKEN, fetchTransport, makeVault, python, serve } from "./vault.mjs";

const NOTE = "2 Areas/people/sarah-chen/facts/sarah-chen-004.md";
const notices = [];
const clipboard = [];
const cleanups = [];

class Element {
	text = "";
	attrs = {};
	classes = new Set();
	children = [];
	constructor(tag = "div") {
		this.tag = tag;
	}
	setText(text) {
		this.text = text;
	}
	setAttr(name, value) {
		this.attrs[name] = value;
	}
	addClass(name) {
		this.classes.add(name);
	}
	toggleClass(name, on) {
		if (on) this.classes.add(name);
		else this.classes.delete(name);
	}
	createEl(tag, options = {}) {
		const child = new Element(tag);
		child.text = options.text ?? "";
		if (options.cls) child.classes.add(options.cls);
		this.children.push(child);
		return child;
	}
	createDiv(options) {
		return this.createEl("div", options);
	}
	empty() {
		this.children = [];
	}
	/** Every text and button label below this element, in order. */
	texts() {
		return [this.text, ...this.children.flatMap((c) => c.texts())].filter(Boolean);
	}
	buttons() {
		return [...(this.button ? [this.button] : []), ...this.children.flatMap((c) => c.buttons())];
	}
}

const opened = [];

class Modal {
	constructor(app) {
		this.app = app;
		this.contentEl = new Element();
	}
	setTitle(title) {
		this.title = title;
	}
	open() {
		opened.push(this);
		this.onOpen?.();
	}
	close() {
		this.onClose?.();
	}
}

class SuggestModal extends Modal {
	setPlaceholder() {}
	onClose() {}
}

class ButtonComponent {
	constructor(container) {
		container.createEl("button").button = this;
	}
	setButtonText(text) {
		this.text = text;
		return this;
	}
	setCta() {
		return this;
	}
	setDisabled(disabled) {
		this.disabled = disabled;
		return this;
	}
	onClick(callback) {
		this.click = callback;
		return this;
	}
}

class TFile {
	constructor(path) {
		this.path = path;
	}
}

class Plugin {
	commands = [];
	statusItems = [];
	constructor(app, manifest, saved) {
		this.app = app;
		this.manifest = manifest;
		this.saved = saved;
	}
	loadData() {
		return Promise.resolve(this.saved);
	}
	saveData(data) {
		this.saved = data;
		return Promise.resolve();
	}
	addStatusBarItem() {
		const item = new Element();
		this.statusItems.push(item);
		return item;
	}
	addCommand(command) {
		this.commands.push(command);
		return command;
	}
	addSettingTab() {}
	registerDomEvent() {}
	registerInterval(id) {
		cleanups.push(() => clearInterval(id));
		return id;
	}
	register(callback) {
		cleanups.push(callback);
	}
}

const shownFiles = [];
let activeFile = null;
const app = {
	workspace: {
		onLayoutReady: (callback) => callback(),
		getActiveFile: () => activeFile,
		getLeaf: (split) => ({ openFile: (file, state) => shownFiles.push({ path: file.path, split, state }) }),
	},
	vault: { getAbstractFileByPath: (path) => (vault.exists(path) ? new TFile(path) : null) },
};

const standIn = {
	Plugin,
	Notice: class {
		constructor(message) {
			notices.push(message);
		}
	},
	TFile,
	Modal,
	SuggestModal,
	ButtonComponent,
	PluginSettingTab: class {},
	Setting: class {},
	debounce: (fn) => Object.assign((...args) => fn(...args), { cancel: () => undefined }),
	requestUrl: (request) => fetchTransport(request),
};

function loadPlugin(saved) {
	const original = Module._load;
	Module._load = function (request, ...rest) {
		return request === "obsidian" ? standIn : original.call(this, request, ...rest);
	};
	try {
		const PluginClass = createRequire(import.meta.url)("../main.js").default;
		return new PluginClass(app, { id: "vaultsync" }, saved);
	} finally {
		Module._load = original;
	}
}

async function until(what, check) {
	for (let tries = 0; tries < 1200; tries++) {
		if (await check()) return;
		await new Promise((done) => setTimeout(done, 50));
	}
	assert.fail(`never: ${what}`);
}

let vault, server, plugin;

before(async () => {
	globalThis.window = globalThis;
	Object.defineProperty(globalThis, "navigator", {
		value: { clipboard: { writeText: (text) => Promise.resolve(void clipboard.push(text)) } },
		configurable: true,
	});
	vault = makeVault();
	server = await serve(vault);
	plugin = loadPlugin({ baseUrl: server.url, token: TOKEN });
	await plugin.onload();
});

after(async () => {
	cleanups.forEach((cleanup) => cleanup());
	await server?.stop();
	vault?.remove();
});

test("the commands are registered, without the plugin's name or default hotkeys", () => {
	const ids = plugin.commands.map((c) => c.id).sort();
	assert.deepEqual(ids, ["open-latest-review", "review-inbox", "search-memory", "show-conflicts", "show-held-changes", "show-note-history", "sync-now"]);
	assert.ok(plugin.commands.every((c) => !c.hotkeys && !/vaultsync/i.test(c.name)));
	const history = plugin.commands.find((c) => c.id === "show-note-history");
	assert.equal(history.checkCallback(true), false, "offered with no note open");
});

test("the status bar shows the last pass from the server", async () => {
	const [bar] = plugin.statusItems;
	await until("the status is shown", () => bar.text.startsWith("Vaultsync: synced"));
	assert.match(bar.text, /^Vaultsync: synced .*, ok$/);
	assert.match(bar.attrs["aria-label"], /Last run: sync/);
});

test("sync now runs a pass on the server, and a new conflict gets a notice", async () => {
	vault.write(NOTE, vault.read(NOTE).replace(/^category: .*$/m, "category: habit"));
	const doc = vault.items("areas/people/sarah-chen");
	doc.find((f) => f.id === "sarah-chen-004").category = "routine";
	vault.writeItems("areas/people/sarah-chen", doc);

	plugin.commands.find((c) => c.id === "sync-now").callback();

	const [bar] = plugin.statusItems;
	await until("the conflict reaches the status bar", () => bar.text.includes("1 conflict"));
	const status = await fetchTransport({ url: `${server.url}/status`, method: "GET", headers: { Authorization: `Bearer ${TOKEN}` } });
	assert.equal(status.json.last_run.kind, "api");
	assert.equal(notices.length, 1, notices.join("\n"));
	assert.match(notices[0], /New sync conflict: .*sarah-chen-004\.vaultsync-conflict-/);
});

const command = (id) => plugin.commands.find((c) => c.id === id);
const lastOpened = () => opened[opened.length - 1];
const call = (method, path, body) =>
	fetchTransport({
		url: server.url + path,
		method,
		headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
		body: body && JSON.stringify(body),
	});

test("show conflicts: open both side by side, then keep mine", async () => {
	command("show-conflicts").callback();
	const first = lastOpened();
	await until("the conflict is listed", () => first.contentEl.buttons().length === 3);
	assert.ok(first.contentEl.texts().includes(NOTE));
	first.contentEl.buttons().find((b) => b.text === "Open both").click();
	await until("both opened", () => shownFiles.length === 2);
	assert.deepEqual(shownFiles.map((f) => [f.path.replace(/\.vaultsync-conflict-.*/, ""), f.split]), [
		[NOTE, false],
		[NOTE.replace(/\.md$/, ""), "split"],
	]);

	command("show-conflicts").callback();
	const modal = lastOpened();
	await until("listed again", () => modal.contentEl.buttons().length === 3);
	modal.contentEl.buttons().find((b) => b.text === "Keep mine").click();
	const category = () => vault.items("areas/people/sarah-chen").find((f) => f.id === "sarah-chen-004").category;
	await until("carried to memory", () => category() === "habit");
	assert.match(vault.read(NOTE), /^category: habit$/m);
	assert.deepEqual((await call("GET", "/conflicts")).json.conflicts, []);
	await until("the list says so", () => modal.contentEl.texts().includes("No open conflicts."));
	await until("the status bar too", () => !plugin.statusItems[0].text.includes("conflict"));
});

test("review the inbox: the count follows the events, and accept writes the fact", async () => {
	const made = await call("POST", "/facts", { entity: "areas/people/sarah-chen", fact: "Sarah Chen rows on Saturdays", status: "proposed" });
	assert.equal(made.status, 201);
	await until("the status bar counts it", () => plugin.statusItems[0].text.endsWith("· 1 proposed"));
	command("review-inbox").callback();
	const modal = lastOpened();
	await until("listed", () => modal.contentEl.buttons().length === 3);
	assert.ok(modal.contentEl.texts().includes("Sarah Chen rows on Saturdays"));
	modal.contentEl.buttons().find((b) => b.text === "Accept").click();
	const held = () => vault.items("areas/people/sarah-chen").find((f) => f.fact === "Sarah Chen rows on Saturdays");
	await until("accepted", () => held().status === "active");
	await until("the list is empty", () => modal.contentEl.texts().includes("No proposed facts are waiting."));
});

test("search memory: the current fact first, opened at its note", async () => {
	command("search-memory").callback();
	const modal = lastOpened();
	assert.deepEqual(await modal.getSuggestions("a"), [], "one letter is not searched");
	const hits = await modal.getSuggestions("Sarah agenda meeting");
	assert.equal(hits[0].vault_path, NOTE);
	shownFiles.length = 0;
	modal.onChooseSuggestion(hits[0]);
	await until("opened", () => shownFiles.some((f) => f.path === NOTE));
});

test("this note's history and the latest review note", async () => {
	activeFile = new TFile(NOTE);
	assert.equal(command("show-note-history").checkCallback(true), true);
	command("show-note-history").checkCallback(false);
	const modal = lastOpened();
	await until("loaded", () => modal.contentEl.children.length > 1);
	assert.ok(modal.contentEl.texts().some((t) => t.includes("Nora (person)")), modal.contentEl.texts().join("\n"));

	mkdirSync(join(vault.vault, "Reviews"), { recursive: true });
	vault.write("Reviews/2026-W49.md", "# Review\n");
	shownFiles.length = 0;
	command("open-latest-review").callback();
	await until("opened", () => shownFiles.some((f) => f.path === "Reviews/2026-W49.md"));
});

test("a held change: counted in the status bar, one notice, listed with the commands, which run as copied", async () => {
	const MEMORY = "3 Resources/agent/MEMORY.md";
	const LI = "2 Areas/people/li-wei";
	writeFileSync(join(vault.workspace, "MEMORY.md"), "# Memory\n\n- keep it short\n");
	const facts = vault.items("areas/people/li-wei");
	vault.writeItems("areas/people/li-wei", facts.slice(0, 1));
	notices.length = 0;

	command("sync-now").callback();

	const [bar] = plugin.statusItems;
	await until("the holds reach the status bar", () => bar.text.includes("held"));
	assert.match(bar.text, /^Vaultsync: synced just now, held · 2 changes held$/);
	assert.match(bar.attrs["aria-label"], /2 changes held: the other side keeps its copy/);
	assert.equal(notices.length, 1, notices.join("\n"));
	assert.match(notices[0], /^2 changes were held, the other side keeps its copy: /);
	assert.ok(notices[0].includes(MEMORY) && notices[0].includes(LI), notices[0]);
	const nonBlank = (text) => text.split("\n").filter((line) => line.trim()).length;
	assert.ok(nonBlank(vault.read(MEMORY)) > 10, "the vault keeps the long MEMORY.md");

	command("show-held-changes").callback();
	const modal = lastOpened();
	await until("listed", () => modal.contentEl.buttons().length === 4);
	const texts = modal.contentEl.texts();
	const memoryAt = texts.indexOf(MEMORY);
	const liAt = texts.indexOf(LI);
	assert.ok(memoryAt >= 0 && liAt >= 0, texts.join("\n"));
	assert.match(texts[memoryAt + 1], /^agent cut the file \(\d+ → 2 lines\); the other side keeps its copy$/);
	assert.deepEqual(texts.slice(memoryAt + 2, memoryAt + 4), [
		`Meant it: vaultsync accept '${MEMORY}'`,
		`A mistake: vaultsync restore '${MEMORY}'`,
	]);
	assert.equal(texts[liAt + 1], `agent removed most facts (${facts.length} → 1 facts); the other side keeps its copy`);
	assert.deepEqual(texts.slice(liAt + 2, liAt + 4), [`Meant it: vaultsync accept '${LI}'`, `A mistake: vaultsync restore '${LI}'`]);

	// The copied commands, run by a shell as pasted: accept carries the cut, restore puts Li Wei's facts back.
	const buttons = modal.contentEl.buttons();
	const run = async (index, exit) => {
		buttons[index].click();
		await until("copied", () => clipboard.length > 0);
		const pasted = clipboard.pop();
		assert.equal(notices[notices.length - 1], `Copied: ${pasted}`);
		const shell = `${pasted.replace(/^vaultsync /, `'${python}' -m vaultsync.cli `)} --config '${vault.config}'`;
		const done = spawnSync("sh", ["-c", shell], { env: vault.env, encoding: "utf8", timeout: 300_000 });
		assert.equal(done.status, exit, `${pasted}: ${done.stdout}${done.stderr}`);
		return pasted;
	};
	const order = memoryAt < liAt ? [0, 3] : [2, 1];
	assert.equal(await run(order[0], 7), `vaultsync accept '${MEMORY}'`, "exit 7: Li Wei is still held");
	await until("one hold left", () => bar.text.endsWith("· 1 change held"));
	assert.equal(nonBlank(vault.read(MEMORY)), 2, "accepted: the cut reached the vault");
	assert.equal(await run(order[1], 0), `vaultsync restore '${LI}'`);
	await until("none held", () => !bar.text.includes("held"));
	assert.deepEqual(vault.items("areas/people/li-wei"), facts, "restored: Li Wei's facts are back in memory");
	assert.equal(notices.filter((n) => /held/.test(n)).length, 1, notices.join("\n"));
});

test("a server that went away: the status bar says so, and sync now gives one notice", async () => {
	await server.stop();
	notices.length = 0;
	plugin.commands.find((c) => c.id === "sync-now").callback();
	const [bar] = plugin.statusItems;
	await until("shown as not reachable", () => bar.text === "Vaultsync not reachable");
	assert.match(bar.attrs["aria-label"], /vaultsync doctor/);
	assert.equal(notices.length, 1, notices.join("\n"));
	assert.match(notices[0], /^Sync failed: nothing answers at http:\/\/127\.0\.0\.1:\d+ .*Run "vaultsync doctor" to see why/);
});
