/** The plugin's settings as saved, and their defaults. */

/** Kept in the plugin's data.json, which `vaultsync obsidian install` writes (git-ignored: it holds the token). */
export interface Settings {
	baseUrl: string;
	token: string;
}

export const DEFAULT_SETTINGS: Settings = { baseUrl: "http://127.0.0.1:8765", token: "" };

export function settingsFrom(saved: unknown): Settings {
	const given = saved && typeof saved === "object" ? (saved as Partial<Record<keyof Settings, unknown>>) : {};
	return {
		baseUrl: typeof given.baseUrl === "string" && given.baseUrl ? given.baseUrl : DEFAULT_SETTINGS.baseUrl,
		token: typeof given.token === "string" ? given.token : DEFAULT_SETTINGS.token,
	};
}
