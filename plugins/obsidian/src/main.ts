import { Notice, Plugin, TFile, debounce, requestUrl } from "obsidian";
import { Api, ApiError, Cancelled, Unreachable, type Held, type Overview, type Transport } from "./api";
import { follow, type Fetch } from "./events";
import { heldNotice, heldOf, newHeld } from "./held";
import { ConflictsModal, DetailsModal, HeldModal, HistoryModal, InboxModal, RecallModal } from "./modals";
import type { Host } from "./host";
import { DEFAULT_SETTINGS, settingsFrom, type Settings } from "./settings";
import { SettingsTab } from "./settings-tab";
import { newConflicts, shown, type State } from "./status";

const POLL_MS = 30_000; // without the event stream, the status is asked for this often
const RETRY_MS = 15_000; // a broken event stream is opened again after this long
const QUIET_MS = 500; // events close together make one refresh

/** Obsidian's `requestUrl` (no CORS, works on every platform), answering errors instead of throwing them. */
const obsidianTransport: Transport = async (request) => {
	const response = await requestUrl({
		url: request.url,
		method: request.method,
		headers: request.headers,
		body: request.body,
		throw: false,
	});
	let json: unknown = null;
	try {
		json = response.json as unknown;
	} catch {
		json = null;
	}
	return { status: response.status, headers: response.headers, json };
};

export default class VaultsyncPlugin extends Plugin implements Host {
	settings: Settings = { ...DEFAULT_SETTINGS };
	api!: Api;
	state: State | null = null;
	private statusEl!: HTMLElement;
	private knownConflicts: string[] | null = null;
	private knownHeld: Held[] | null = null;
	private stream: AbortController | null = null;
	private streaming = false;
	private retry: number | null = null;
	private refreshing: AbortController | null = null;
	private readonly soon = debounce(() => void this.refresh({ inbox: true }), QUIET_MS, true);
	private readonly reconnect = debounce(() => this.connect(), 1_000, true);

	async onload(): Promise<void> {
		this.settings = settingsFrom(await this.loadData());
		this.api = new Api(obsidianTransport, this.settings.baseUrl, this.settings.token);
		this.statusEl = this.addStatusBarItem();
		this.statusEl.addClass("vaultsync-status");
		this.statusEl.setText("Vaultsync: connecting…");
		this.registerDomEvent(this.statusEl, "click", () => new DetailsModal(this.app, this).open());
		this.addSettingTab(new SettingsTab(this.app, this));

		this.addCommand({ id: "sync-now", name: "Sync now", callback: () => void this.syncNow() });
		this.addCommand({ id: "search-memory", name: "Search memory", callback: () => new RecallModal(this.app, this).open() });
		this.addCommand({ id: "review-inbox", name: "Review the inbox", callback: () => new InboxModal(this.app, this).open() });
		this.addCommand({ id: "show-conflicts", name: "Show conflicts", callback: () => new ConflictsModal(this.app, this).open() });
		this.addCommand({ id: "show-held-changes", name: "Show held changes", callback: () => new HeldModal(this.app, this).open() });
		this.addCommand({ id: "open-latest-review", name: "Open the latest review note", callback: () => void this.openLatestReview() });
		this.addCommand({
			id: "show-note-history",
			name: "Show this note's history",
			checkCallback: (checking) => {
				const file = this.app.workspace.getActiveFile();
				if (!file) return false;
				if (!checking) new HistoryModal(this.app, this, file.path).open();
				return true;
			},
		});

		this.registerInterval(window.setInterval(() => this.tick(), POLL_MS));
		this.register(() => this.disconnect());
		this.app.workspace.onLayoutReady(() => this.connect());
	}

	async saveSettings(): Promise<void> {
		await this.saveData(this.settings);
		this.api = new Api(obsidianTransport, this.settings.baseUrl, this.settings.token);
		this.reconnect();
	}

	/** Ask for the status (and the inbox's size) and show it; only one such request runs at a time. `loud`: say
	 * that it answered; `inbox`: count the inbox again even if no run was recorded since the last look. */
	async refresh({ loud = false, inbox = false } = {}): Promise<void> {
		this.refreshing?.abort();
		const controller = new AbortController();
		this.refreshing = controller;
		try {
			const overview = await this.api.status(controller.signal);
			const size = await this.inboxSize(overview, inbox, controller.signal);
			this.show({ reachable: true, overview, inbox: size });
			for (const copy of newConflicts(this.knownConflicts, overview.open_conflicts)) {
				new Notice(`New sync conflict: your version is kept in ${copy}. Run "Show conflicts" to resolve it.`);
			}
			this.knownConflicts = overview.open_conflicts;
			const fresh = newHeld(this.knownHeld, heldOf(overview));
			if (fresh.length) new Notice(heldNotice(fresh));
			this.knownHeld = heldOf(overview);
			if (loud) new Notice("Vaultsync answers.");
		} catch (error) {
			if (error instanceof Cancelled) return;
			this.show({ reachable: false, reason: error instanceof Error ? error.message : String(error) });
			if (loud) this.failed("Vaultsync does not answer", error);
		} finally {
			if (this.refreshing === controller) this.refreshing = null;
		}
	}

	/** The inbox changes by a pass (every write through the API runs one), and listing it reads every entity's
	 * file, so a poll asks for it again only when another run was recorded since the last look. */
	private async inboxSize(overview: Overview, again: boolean, signal: AbortSignal): Promise<number> {
		const seen = this.state?.reachable ? this.state : null;
		const same = seen && JSON.stringify(seen.overview.last_run) === JSON.stringify(overview.last_run);
		if (seen && same && !again) return seen.inbox;
		return (await this.api.inbox(signal)).length;
	}

	async syncNow(): Promise<void> {
		this.statusEl.setText("Vaultsync: syncing…");
		try {
			const report = await this.api.sync();
			const code = report.exit_code ?? report.sync?.exit_code ?? 0;
			// A hold (7) is in the status bar, and a new one gets its own notice when the status is read.
			if (code > 1 && code !== 7) new Notice(`Sync ended with problems (exit ${code}); click the status bar for details.`);
		} catch (error) {
			this.failed("Sync failed", error);
		}
		await this.refresh({ inbox: true });
	}

	async openLatestReview(): Promise<void> {
		try {
			const note = await this.api.latestReview();
			if (note) await this.openPath(note, false);
			else new Notice("No review note yet: run vaultsync review.");
		} catch (error) {
			this.failed("Could not find the review note", error);
		}
	}

	async openPath(path: string, split: boolean, line?: number): Promise<void> {
		const file = this.app.vault.getAbstractFileByPath(path);
		if (!(file instanceof TFile)) {
			new Notice(`${path} is not in the vault (yet): run a sync.`);
			return;
		}
		const leaf = this.app.workspace.getLeaf(split ? "split" : false);
		await leaf.openFile(file, line ? { eState: { line: Math.max(0, line - 1) } } : undefined);
	}

	async openBoth(note: string, copy: string): Promise<void> {
		await this.openPath(note, false);
		await this.openPath(copy, true);
	}

	/** The one way errors reach the person: a notice naming what failed and what to do. */
	failed(what: string, error: unknown): void {
		let why = error instanceof Error ? error.message : String(error);
		if (error instanceof Unreachable) why = `${why}. Run "vaultsync doctor" to see why and how to fix it`;
		if (error instanceof ApiError && error.status === 401) why = "the token is wrong; check the plugin's settings";
		new Notice(`${what}: ${why}`);
	}

	/** Put a command on the clipboard, to paste in a terminal; the notice shows it, so it can be typed instead. */
	async copy(text: string): Promise<void> {
		try {
			await navigator.clipboard.writeText(text);
			new Notice(`Copied: ${text}`);
		} catch (error) {
			this.failed(`Could not copy; run it by hand: ${text}`, error);
		}
	}

	private show(state: State): void {
		this.state = state;
		const { text, tooltip } = shown(state, new Date());
		this.statusEl.setText(text);
		this.statusEl.setAttr("aria-label", tooltip);
		this.statusEl.toggleClass("vaultsync-down", !state.reachable);
	}

	private tick(): void {
		if (!this.streaming) void this.refresh();
	}

	private connect(): void {
		this.disconnect();
		const controller = new AbortController();
		this.stream = controller;
		void this.refresh();
		const fetcher: Fetch = (url, init) => window.fetch(url, init);
		const url = `${this.settings.baseUrl.replace(/\/+$/, "")}/events`;
		const onEvent = (event: { event: string }) => {
			if (event.event === "finished" || event.event === "run") this.soon();
		};
		follow(fetcher, url, this.settings.token, controller.signal, onEvent, () => (this.streaming = true))
			.catch(() => undefined)
			.finally(() => {
				this.streaming = false;
				if (this.stream === controller && !controller.signal.aborted) {
					this.retry = window.setTimeout(() => this.connect(), RETRY_MS);
				}
			});
	}

	private disconnect(): void {
		if (this.retry !== null) window.clearTimeout(this.retry);
		this.retry = null;
		this.soon.cancel();
		this.stream?.abort();
		this.stream = null;
		this.streaming = false;
		this.refreshing?.abort();
	}
}
