/** The settings tab: the API's address and token, and a button that checks them. */

import { App, PluginSettingTab, Setting, type SettingDefinitionItem } from "obsidian";
import type { Host } from "./host";
import { DEFAULT_SETTINGS } from "./settings";

const ADDRESS_HELP = "Where the local API listens: the address the serve command prints.";
const TOKEN_HELP = "The API's bearer token, from the token file beside the config.";
const CHECK_HELP = "Asks the API for its status with these settings.";

export class SettingsTab extends PluginSettingTab {
	constructor(
		app: App,
		private readonly plugin: Host,
	) {
		super(app, plugin);
	}

	/** The same settings for the app's declarative settings (1.13 and later), which also makes them searchable. */
	getSettingDefinitions(): SettingDefinitionItem[] {
		return [
			{
				name: "API address",
				desc: ADDRESS_HELP,
				control: { type: "text", key: "baseUrl", placeholder: DEFAULT_SETTINGS.baseUrl },
			},
			{ name: "Token", desc: TOKEN_HELP, control: { type: "text", key: "token" } },
			{ name: "Check the connection", desc: CHECK_HELP, action: () => void this.plugin.refresh({ loud: true, inbox: true }) },
		];
	}

	async setControlValue(key: string, value: unknown): Promise<void> {
		const text = typeof value === "string" ? value.trim() : "";
		if (key === "baseUrl") this.plugin.settings.baseUrl = text || DEFAULT_SETTINGS.baseUrl;
		if (key === "token") this.plugin.settings.token = text;
		await this.plugin.saveSettings();
	}

	display(): void {
		const { containerEl } = this;
		containerEl.empty();
		new Setting(containerEl)
			.setName("API address")
			.setDesc(ADDRESS_HELP)
			.addText((text) =>
				text
					.setPlaceholder(DEFAULT_SETTINGS.baseUrl)
					.setValue(this.plugin.settings.baseUrl)
					.onChange(async (value) => {
						this.plugin.settings.baseUrl = value.trim() || DEFAULT_SETTINGS.baseUrl;
						await this.plugin.saveSettings();
					}),
			);
		new Setting(containerEl)
			.setName("Token")
			.setDesc(TOKEN_HELP)
			.addText((text) => {
				text.inputEl.type = "password";
				text.setValue(this.plugin.settings.token).onChange(async (value) => {
					this.plugin.settings.token = value.trim();
					await this.plugin.saveSettings();
				});
			});
		new Setting(containerEl)
			.setName("Check the connection")
			.setDesc(CHECK_HELP)
			.addButton((button) =>
				button.setButtonText("Check").onClick(() => {
					void this.plugin.refresh({ loud: true, inbox: true });
				}),
			);
	}
}
