// The plugin's logic, bundled one module at a time into test/.out/ so Node's test runner can import it.
import esbuild from "esbuild";

for (const name of ["api", "status", "events", "held"]) {
	await esbuild.build({
		entryPoints: [`src/${name}.ts`],
		bundle: true,
		format: "esm",
		platform: "node",
		target: "node20",
		logLevel: "warning",
		outfile: `test/.out/${name}.mjs`,
	});
}
