import { defineConfig, globalIgnores } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";
import globals from "globals";

export default defineConfig([
	globalIgnores(["node_modules/", "main.js", "test/.out/"]),
	...obsidianmd.configs.recommended,
	{
		languageOptions: {
			parserOptions: {
				projectService: { allowDefaultProject: ["eslint.config.mjs", "esbuild.config.mjs", "test/*.mjs"] },
				tsconfigRootDir: import.meta.dirname,
			},
		},
	},
	{
		// The build and the tests run in Node, never in the app: its window and network rules do not apply there.
		files: ["esbuild.config.mjs", "test/**/*.mjs"],
		languageOptions: { globals: globals.node },
		rules: {
			"no-restricted-globals": "off",
			"obsidianmd/no-global-this": "off",
			"obsidianmd/prefer-window-timers": "off",
		},
	},
]);
