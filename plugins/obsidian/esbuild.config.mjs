// Bundles src/ into main.js (obsidian and the editor's packages stay external: the app provides them), then copies
// the files a vault needs into the Python package, where `vaultsync obsidian install` finds them.
import { copyFileSync, mkdirSync } from "node:fs";
import { builtinModules } from "node:module";
import esbuild from "esbuild";

const production = !process.argv.includes("--dev");
const here = new URL(".", import.meta.url);
const shipped = new URL("../../vaultsync/obsidian_plugin/", here);

await esbuild.build({
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
});

mkdirSync(shipped, { recursive: true });
for (const name of ["main.js", "manifest.json", "styles.css"]) {
	copyFileSync(new URL(name, here), new URL(name, shipped));
}
