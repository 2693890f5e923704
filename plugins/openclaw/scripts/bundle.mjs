// Bundles src/ (with its one runtime package, typebox) into a single index.js and writes it into the Python
// package, with the manifest, a package.json naming that file as the entry, and SOURCES: the sha256 of every
// file the bundle is built from. The package's copy is committed, so building the wheel and running
// `vaultsync openclaw install` need no Node and no node_modules; tests/app/test_plugin_bundle.py checks SOURCES
// against the files here, and `node scripts/bundle.mjs --check` (scripts/ci.sh) builds again in memory and
// compares the bytes with the committed copy.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import esbuild from "esbuild";

const check = process.argv.includes("--check");
const here = new URL("..", import.meta.url);
const shipped = new URL("../../vaultsync/openclaw_plugin/", here);
const SHIPPED = ["index.js", "openclaw.plugin.json", "package.json"];
const INPUTS = ["openclaw.plugin.json", "package-lock.json", "package.json", "scripts/bundle.mjs", "tsconfig.json"];

const built = await esbuild.build({
  entryPoints: [new URL("src/index.ts", here).pathname],
  bundle: true,
  // OpenClaw's own modules are imported for their types only; node's are the host's
  external: ["openclaw", "openclaw/*", ...builtinModules, ...builtinModules.map((name) => `node:${name}`)],
  format: "esm",
  platform: "node",
  target: "node24",
  logLevel: "warning",
  legalComments: "eof",
  treeShaking: true,
  outfile: "index.js",
  write: false,
});

const source = JSON.parse(readFileSync(new URL("package.json", here), "utf8"));
const plugin = JSON.parse(readFileSync(new URL("openclaw.plugin.json", here), "utf8"));
// named as the plugin's id, which OpenClaw keys its config by (it warns when the package's name differs)
const manifest = {
  name: plugin.id,
  version: source.version,
  description: source.description,
  license: source.license,
  type: "module",
  main: "index.js",
  openclaw: { ...source.openclaw, extensions: ["./index.js"] },
};
const sources = [...INPUTS, ...readdirSync(new URL("src/", here)).map((name) => `src/${name}`)].sort();
const digest = (bytes) => createHash("sha256").update(bytes).digest("hex");
const files = {
  "index.js": built.outputFiles[0].contents,
  "openclaw.plugin.json": readFileSync(new URL("openclaw.plugin.json", here)),
  "package.json": `${JSON.stringify(manifest, null, 2)}\n`,
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
    console.error(
      `vaultsync/openclaw_plugin/ is not what plugins/openclaw bundles (${stale.join(", ")}); run npm run bundle and commit it`,
    );
    process.exit(1);
  }
} else {
  mkdirSync(shipped, { recursive: true });
  for (const name of [...SHIPPED, "SOURCES"]) writeFileSync(new URL(name, shipped), files[name]);
}
