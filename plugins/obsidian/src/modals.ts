/** The modals the commands open: search, inbox, conflicts, held changes, a note's history and the status details. */

import { App, ButtonComponent, Modal, Notice, SuggestModal } from "obsidian";
import { ApiError, Cancelled, type Change, type Conflict, type Fact, type Held, type Hit } from "./api";
import { answers, heldOf, heldWhat } from "./held";
import type { Host } from "./host";
import { ago, outcome } from "./status";

const TYPING_PAUSE_MS = 250; // a search starts when typing pauses this long, not on every key

function errorText(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

export class RecallModal extends SuggestModal<Hit> {
	private pending: AbortController | null = null;

	constructor(
		app: App,
		private readonly plugin: Host,
	) {
		super(app);
		this.setPlaceholder("Search memory: plain words");
	}

	async getSuggestions(query: string): Promise<Hit[]> {
		this.pending?.abort();
		const words = query.trim();
		if (words.length < 2) return [];
		const controller = new AbortController();
		this.pending = controller;
		await new Promise((resolve) => window.setTimeout(resolve, TYPING_PAUSE_MS));
		if (controller.signal.aborted) return [];
		try {
			const { hits } = await this.plugin.api.recall(words, controller.signal);
			return hits.filter((hit) => hit.vault_path);
		} catch (error) {
			if (!(error instanceof Cancelled)) this.plugin.failed("Search failed", error);
			return [];
		}
	}

	renderSuggestion(hit: Hit, el: HTMLElement): void {
		el.createDiv({ text: hit.text.split("\n")[0] ?? hit.text });
		const status = hit.status && hit.status !== "active" ? ` (${hit.status})` : "";
		el.createEl("small", { text: `${hit.kind}${status} · ${hit.vault_path ?? hit.path}`, cls: "vaultsync-muted" });
	}

	onChooseSuggestion(hit: Hit): void {
		if (hit.vault_path) void this.plugin.openPath(hit.vault_path, false, hit.lines?.[0]);
	}

	onClose(): void {
		this.pending?.abort();
		super.onClose();
	}
}

/** A modal whose rows load from the API when it opens; closing it cancels what is still loading. */
abstract class ListModal<T> extends Modal {
	protected readonly controller = new AbortController();

	constructor(
		app: App,
		protected readonly plugin: Host,
		private readonly heading: string,
	) {
		super(app);
	}

	protected abstract load(signal: AbortSignal): Promise<T[]>;
	protected abstract row(item: T, el: HTMLElement): void;
	protected abstract empty: string;

	onOpen(): void {
		this.setTitle(this.heading);
		void this.reload();
	}

	onClose(): void {
		this.controller.abort();
		this.contentEl.empty();
	}

	async reload(): Promise<void> {
		this.contentEl.empty();
		const status = this.contentEl.createEl("p", { text: "Loading…" });
		try {
			const items = await this.load(this.controller.signal);
			status.setText(items.length ? "" : this.empty);
			for (const item of items) this.row(item, this.contentEl.createDiv({ cls: "vaultsync-row" }));
		} catch (error) {
			if (error instanceof Cancelled) return;
			status.setText(`Could not load: ${errorText(error)}`);
		}
	}

	/** Run one decision with the row's buttons disabled; the list reloads after it, whatever happened. */
	protected async act(buttons: ButtonComponent[], action: () => Promise<unknown>): Promise<void> {
		for (const button of buttons) button.setDisabled(true);
		try {
			await action();
		} catch (error) {
			if (error instanceof Cancelled) return;
			if (error instanceof ApiError && error.status === 412) {
				new Notice("It changed since the list was loaded; the list is loaded again.");
			} else {
				this.plugin.failed("Not done", error);
			}
		}
		await this.reload();
		void this.plugin.refresh({ inbox: true });
	}
}

export class InboxModal extends ListModal<Fact> {
	protected empty = "No proposed facts are waiting.";

	constructor(app: App, plugin: Host) {
		super(app, plugin, "Inbox: proposed facts");
	}

	protected load(signal: AbortSignal): Promise<Fact[]> {
		return this.plugin.api.inbox(signal);
	}

	protected row(fact: Fact, el: HTMLElement): void {
		el.createDiv({ text: String(fact.record.fact ?? fact.record.id) });
		el.createEl("small", { text: `${fact.entity} · ${fact.record.id}`, cls: "vaultsync-muted" });
		const bar = el.createDiv({ cls: "vaultsync-actions" });
		const buttons: ButtonComponent[] = [];
		const decide = (decision: "accept" | "reject") => () =>
			void this.act(buttons, () => this.plugin.api.decide(fact, decision, this.controller.signal));
		buttons.push(new ButtonComponent(bar).setButtonText("Accept").setCta().onClick(decide("accept")));
		buttons.push(new ButtonComponent(bar).setButtonText("Reject").onClick(decide("reject")));
		new ButtonComponent(bar).setButtonText("Open").onClick(() => void this.plugin.openPath(fact.note, false));
	}
}

export class ConflictsModal extends ListModal<Conflict> {
	protected empty = "No open conflicts.";

	constructor(app: App, plugin: Host) {
		super(app, plugin, "Conflicts");
	}

	protected load(signal: AbortSignal): Promise<Conflict[]> {
		return this.plugin.api.conflicts(signal);
	}

	protected row(conflict: Conflict, el: HTMLElement): void {
		el.createDiv({ text: conflict.note });
		el.createEl("small", { text: `${conflict.detail} · your version: ${conflict.copy}`, cls: "vaultsync-muted" });
		const bar = el.createDiv({ cls: "vaultsync-actions" });
		const buttons: ButtonComponent[] = [];
		const keep = (which: "mine" | "agent") => () =>
			void this.act(buttons, () => this.plugin.api.resolve(conflict, which, this.controller.signal));
		buttons.push(new ButtonComponent(bar).setButtonText("Keep mine").onClick(keep("mine")));
		buttons.push(new ButtonComponent(bar).setButtonText("Keep the agent's").onClick(keep("agent")));
		new ButtonComponent(bar).setButtonText("Open both").onClick(() => {
			void this.plugin.openBoth(conflict.note, conflict.copy);
			this.close();
		});
	}
}

/** Each held change with the two commands that answer it: the API has no route for them, so they are copied
 * to run in a terminal (where `vaultsync status` names the same holds). */
export class HeldModal extends ListModal<Held> {
	protected empty = "No change is held.";

	constructor(app: App, plugin: Host) {
		super(app, plugin, "Held changes");
	}

	protected async load(signal: AbortSignal): Promise<Held[]> {
		return heldOf(await this.plugin.api.status(signal));
	}

	protected row(held: Held, el: HTMLElement): void {
		const { accept, restore } = answers(held);
		el.createDiv({ text: held.path });
		el.createEl("small", { text: `${heldWhat(held)}; the other side keeps its copy`, cls: "vaultsync-muted" });
		el.createDiv({ text: `Meant it: ${accept}`, cls: "vaultsync-command" });
		el.createDiv({ text: `A mistake: ${restore}`, cls: "vaultsync-command" });
		const bar = el.createDiv({ cls: "vaultsync-actions" });
		new ButtonComponent(bar).setButtonText("Copy accept").onClick(() => void this.plugin.copy(accept));
		new ButtonComponent(bar).setButtonText("Copy restore").onClick(() => void this.plugin.copy(restore));
	}
}

export class HistoryModal extends ListModal<Change> {
	protected empty = "No recorded changes to this note.";

	constructor(
		app: App,
		plugin: Host,
		private readonly path: string,
	) {
		super(app, plugin, `History of ${path}`);
	}

	protected load(signal: AbortSignal): Promise<Change[]> {
		return this.plugin.api.history(this.path, signal);
	}

	protected row(change: Change, el: HTMLElement): void {
		el.createDiv({ text: change.what });
		el.createEl("small", {
			text: `${change.when} · ${change.who} (${change.side}) · ${change.commit.slice(0, 8)}`,
			cls: "vaultsync-muted",
		});
	}
}

export class DetailsModal extends Modal {
	constructor(
		app: App,
		private readonly plugin: Host,
	) {
		super(app);
	}

	onOpen(): void {
		this.setTitle("Sync status");
		const { contentEl } = this;
		const state = this.plugin.state;
		if (!state?.reachable) {
			contentEl.createEl("p", { text: `Vaultsync is not reachable at ${this.plugin.settings.baseUrl}.` });
			contentEl.createEl("p", {
				text: "Run vaultsync doctor in a terminal: it checks every link from the config to this plugin and prints the command that fixes the broken one (vaultsync serve starts the API; vaultsync service install keeps it running).",
			});
		} else {
			const { overview, inbox } = state;
			const now = new Date();
			const last = overview.last_run;
			contentEl.createEl("p", {
				text: last ? `Last run ${ago(last.at, now)} (${last.kind}, ${outcome(last.exit_code)}): ${last.summary}` : "No run recorded yet.",
			});
			const held = heldOf(overview).length;
			contentEl.createEl("p", {
				text: `Changes held: ${held}. Open conflicts: ${overview.open_conflicts.length}. Proposed facts waiting: ${inbox}.`,
			});
			for (const problem of overview.problems) {
				contentEl.createEl("p", { text: `${problem.severity}: ${problem.path}: ${problem.message}`, cls: "vaultsync-muted" });
			}
		}
		const bar = contentEl.createDiv({ cls: "vaultsync-actions" });
		new ButtonComponent(bar).setButtonText("Sync now").setCta().onClick(() => {
			this.close();
			void this.plugin.syncNow();
		});
		if (state?.reachable && heldOf(state.overview).length) {
			new ButtonComponent(bar).setButtonText("Show held changes").onClick(() => {
				this.close();
				new HeldModal(this.app, this.plugin).open();
			});
		}
		new ButtonComponent(bar).setButtonText("Show conflicts").onClick(() => {
			this.close();
			new ConflictsModal(this.app, this.plugin).open();
		});
		new ButtonComponent(bar).setButtonText("Review the inbox").onClick(() => {
			this.close();
			new InboxModal(this.app, this.plugin).open();
		});
	}

	onClose(): void {
		this.contentEl.empty();
	}
}
