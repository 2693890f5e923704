// The built main.js, loaded with a small stand-in for the `obsidian` module (the app itself cannot run here):
// its commands are registered, the status bar shows the real state, "Sync now" runs a pass on a real server,
// a new conflict gets a notice, and a server that went away is shown as such.
import assert from "node:assert/strict";
import Module, { createRequire } from "node:module";
import { after, before, test } from "node:test";
import { TOKEN, fetchTransport, makeVault, serve } from "./vault.mjs";

const notices = [];
const cleanups = [];

class Element {
	text = "";
	attrs = {};
	classes = new Set();
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

const standIn = {
	Plugin,
	Notice: class {
		constructor(message) {
			notices.push(message);
		}
	},
	TFile: class {},
	Modal: class {},
	SuggestModal: class {},
	PluginSettingTab: class {},
	Setting: class {},
	ButtonComponent: class {},
	debounce: (fn) => fn,
	requestUrl: (request) => fetchTransport(request),
};

function loadPlugin(saved) {
	const original = Module._load;
	Module._load = function (request, ...rest) {
		return request === "obsidian" ? standIn : original.call(this, request, ...rest);
	};
	try {
		const PluginClass = createRequire(import.meta.url)("../main.js").default;
		const app = { workspace: { onLayoutReady: (callback) => callback(), getActiveFile: () => null }, vault: {} };
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
	assert.deepEqual(ids, ["open-latest-review", "review-inbox", "search-memory", "show-conflicts", "show-note-history", "sync-now"]);
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
	const note = "2 Areas/people/sarah-chen/facts/sarah-chen-004.md";
	vault.write(note, vault.read(note).replace(/^category: .*$/m, "category: habit"));
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

test("a server that went away: the status bar says so, and sync now gives one notice", async () => {
	await server.stop();
	notices.length = 0;
	plugin.commands.find((c) => c.id === "sync-now").callback();
	const [bar] = plugin.statusItems;
	await until("shown as not reachable", () => bar.text === "Vaultsync not reachable");
	assert.match(bar.attrs["aria-label"], /vaultsync serve/);
	assert.equal(notices.length, 1, notices.join("\n"));
	assert.match(notices[0], /^Sync failed: nothing answers at http:\/\/127\.0\.0\.1:\d+ .*Is "vaultsync serve" running\?/);
});
