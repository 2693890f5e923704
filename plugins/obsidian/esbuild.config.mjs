// Bundles src/ into main.js (obsidian and the editor's packages stay external: the app provides them), then copies
// the files a vault needs into the Python package, where `vaultsync obsidian install` finds them, with SOURCES:
// the sha256 of every file the bundle is built from. The package's copy is committed, so building the wheel and
// installing the plugin need no Node; tests/test_plugin_bundle.py checks SOURCES against the files here, and
// `node esbuild.config.mjs --check` (CI) builds again in memory and compares the bytes with the committed copy.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import esbuild from "esbuild";

const production = !process.argv.includes("--dev");
const check = process.argv.includes("--check");
const here = new URL(".", import.meta.url);
const shipped = new URL("../../vaultsync/obsidian_plugin/", here);
const SHIPPED = ["main.js", "manifest.json", "styles.css"];
const INPUTS = ["esbuild.config.mjs", "manifest.json", "package-lock.json", "styles.css", "tsconfig.json"];

const built = await esbuild.build({
	entryPoints: ["src/main.ts"],
	bundle: true,
	external: ["obsidian", "electron", "@codemirror/*", "@lezer/*", ...builtinModules],
	format: "cjs",
	target: "es2021",
	platform: "browser",
	logLevel: "warning",
	sourcemap: production ? false : "inline",
	minify: production,
	treeShaking: true,
	outfile: "main.js",
	write: false,
});

const sources = [...INPUTS, ...readdirSync(new URL("src/", here)).map((name) => `src/${name}`)].sort();
const digest = (bytes) => createHash("sha256").update(bytes).digest("hex");
const files = {
	"main.js": built.outputFiles[0].contents,
	"manifest.json": readFileSync(new URL("manifest.json", here)),
	"styles.css": readFileSync(new URL("styles.css", here)),
	SOURCES: sources.map((path) => `${digest(readFileSync(new URL(path, here)))}  ${path}\n`).join(""),
};

if (check) {
	const stale = [...SHIPPED, "SOURCES"].filter((name) => {
		let there;
		try {
			there = readFileSync(new URL(name, shipped));
		} catch {
			return true;
		}
		return !Buffer.from(files[name]).equals(there);
	});
	if (stale.length) {
		console.error(`vaultsync/obsidian_plugin/ is not what plugins/obsidian builds (${stale.join(", ")}); run npm run build and commit it`);
		process.exit(1);
	}
} else {
	writeFileSync(new URL("main.js", here), files["main.js"]);
	mkdirSync(shipped, { recursive: true });
	for (const name of [...SHIPPED, "SOURCES"]) writeFileSync(new URL(name, shipped), files[name]);
}
