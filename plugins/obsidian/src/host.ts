/**
 * What the modals and the settings tab need of the plugin. The plugin class (main.ts) implements it, and they
 * depend on this instead of on the class, so the modules import each other in one direction only.
 */

import type { Plugin } from "obsidian";
import type { Api } from "./api";
import type { Settings } from "./settings";
import type { State } from "./status";

export interface Host extends Plugin {
	settings: Settings;
	api: Api;
	state: State | null;
	saveSettings(): Promise<void>;
	refresh(options?: { loud?: boolean; inbox?: boolean }): Promise<void>;
	syncNow(): Promise<void>;
	openPath(path: string, split: boolean, line?: number): Promise<void>;
	openBoth(note: string, copy: string): Promise<void>;
	failed(what: string, error: unknown): void;
	copy(text: string): Promise<void>;
}
