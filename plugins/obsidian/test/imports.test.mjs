// The plugin's modules import each other in one direction only: the plugin class (main.ts) sits on top, and the
// modals and the settings tab reach it through the small host interface (host.ts), never by importing it.
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";

const SRC = new URL("../src/", import.meta.url);
const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+["']\.\/([\w.-]+)["']/gm;

/** Each module of `folder` and the local modules it imports (type-only imports included: they are a knot too). */
export function graphOf(files) {
	const graph = new Map();
	for (const [name, text] of files) {
		graph.set(name, [...text.matchAll(IMPORT)].map((m) => m[1].replace(/\.ts$/, "")));
	}
	return graph;
}

/** One cycle of the graph as a list of names, or null. */
export function cycleIn(graph) {
	const state = new Map();
	const walk = (node, trail) => {
		state.set(node, 1);
		for (const next of graph.get(node) ?? []) {
			if (!graph.has(next)) continue;
			if (state.get(next) === 1) return [...trail.slice(trail.indexOf(next)), next];
			if (!state.has(next)) {
				const found = walk(next, [...trail, next]);
				if (found) return found;
			}
		}
		state.set(node, 2);
		return null;
	};
	for (const node of [...graph.keys()].sort()) {
		if (!state.has(node)) {
			const found = walk(node, [node]);
			if (found) return found;
		}
	}
	return null;
}

const sources = () =>
	readdirSync(SRC)
		.filter((name) => name.endsWith(".ts"))
		.map((name) => [name.replace(/\.ts$/, ""), readFileSync(new URL(name, SRC), "utf8")]);

test("no module of the plugin imports one that imports it back", () => {
	assert.equal(cycleIn(graphOf(sources())), null);
});

test("the check sees a type-only circle like the one the host interface replaced", () => {
	const old = [
		["main", 'import { SettingsTab } from "./settings";\nimport { RecallModal } from "./modals";\n'],
		["modals", 'import type VaultsyncPlugin from "./main";\n'],
		["settings", 'import type VaultsyncPlugin from "./main";\n'],
	];
	assert.deepEqual(cycleIn(graphOf(old)), ["main", "settings", "main"]);
});
