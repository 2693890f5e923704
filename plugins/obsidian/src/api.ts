/**
 * The client of vaultsync's local API. It knows the routes and what their answers mean; how a request travels
 * is given to it (Obsidian's `requestUrl` in the app, Node's `fetch` in the tests), so the same code is tested
 * against a real server.
 */

export interface HttpRequest {
	url: string;
	method: string;
	headers: Record<string, string>;
	body?: string;
	signal?: AbortSignal;
}

export interface HttpResponse {
	status: number;
	headers: Record<string, string>;
	json: unknown;
}

export type Transport = (request: HttpRequest) => Promise<HttpResponse>;

export interface Run {
	at: string;
	kind: string;
	exit_code: number;
	summary: string;
}

/** A change the shrink guard did not carry (docs/safety.md): the file or entity folder, who made it, the size
 * before and after in `unit`, and the bound it crossed, said as words (`rule`: "cut the file"). */
export interface Held {
	path: string;
	scope: string;
	writer: string;
	side: string;
	before: number;
	after: number;
	unit: string;
	rule: string;
}

export interface Overview {
	last_run: Run | null;
	last_finished: Run | null;
	open_conflicts: string[];
	problems: { path: string; message: string; severity: string }[];
	/** Missing from a server older than the shrink guard, which holds nothing. */
	held?: Held[];
}

export interface Fact {
	record: Record<string, unknown> & { id: string; fact?: string; status?: string };
	entity: string;
	note: string;
	etag: string;
}

export interface Conflict {
	copy: string;
	note: string;
	unit: string;
	detail: string;
	note_exists: boolean;
}

export interface Hit {
	kind: string;
	path: string;
	vault_path: string | null;
	text: string;
	id?: string | null;
	entity?: string | null;
	status?: string | null;
	lines?: number[] | null;
}

export interface Change {
	when: string;
	who: string;
	side: string;
	what: string;
	commit: string;
	paths: string[];
}

export interface PassResult {
	sync?: { exit_code: number; summary: string };
	exit_code?: number;
	open_conflicts?: string[];
}

/** The server answered, but not with what was asked: `status` says why (401 token, 412 stale, 409 busy...). */
export class ApiError extends Error {
	constructor(
		readonly status: number,
		readonly detail: string,
	) {
		super(`${status}: ${detail}`);
		this.name = "ApiError";
	}
}

/** Nothing answered at the address: the server is not running, or the address is wrong. */
export class Unreachable extends Error {
	constructor(readonly url: string, cause: unknown) {
		super(`nothing answers at ${url} (${cause instanceof Error ? cause.message : String(cause)})`);
		this.name = "Unreachable";
	}
}

export class Cancelled extends Error {
	constructor() {
		super("cancelled");
		this.name = "Cancelled";
	}
}

/** Give up on `promise` when `signal` aborts, even if the transport itself cannot be stopped. */
export function cancellable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
	if (!signal) return promise;
	if (signal.aborted) return Promise.reject(new Cancelled());
	return new Promise<T>((resolve, reject) => {
		const onAbort = () => reject(new Cancelled());
		signal.addEventListener("abort", onAbort, { once: true });
		promise.then(
			(value) => {
				signal.removeEventListener("abort", onAbort);
				resolve(value);
			},
			(error: unknown) => {
				signal.removeEventListener("abort", onAbort);
				reject(error instanceof Error ? error : new Error(String(error)));
			},
		);
	});
}

function detailOf(json: unknown): string {
	if (json && typeof json === "object" && "detail" in json) {
		const detail = json.detail;
		if (typeof detail === "string") return detail;
		if (detail && typeof detail === "object" && "msg" in detail) return String(detail.msg);
		return JSON.stringify(detail);
	}
	return "unexpected answer";
}

export class Api {
	constructor(
		private readonly transport: Transport,
		private readonly baseUrl: string,
		private readonly token: string,
	) {}

	private async call<T>(method: string, path: string, options: { body?: unknown; ifMatch?: string; signal?: AbortSignal } = {}): Promise<T> {
		const url = this.baseUrl.replace(/\/+$/, "") + path;
		const headers: Record<string, string> = { Authorization: `Bearer ${this.token}` };
		if (options.body !== undefined) headers["Content-Type"] = "application/json";
		if (options.ifMatch) headers["If-Match"] = options.ifMatch;
		const request: HttpRequest = { url, method, headers, signal: options.signal };
		if (options.body !== undefined) request.body = JSON.stringify(options.body);
		let response: HttpResponse;
		try {
			response = await cancellable(this.transport(request), options.signal);
		} catch (error) {
			if (error instanceof Cancelled || options.signal?.aborted) throw new Cancelled();
			throw new Unreachable(this.baseUrl, error);
		}
		if (response.status >= 400) throw new ApiError(response.status, detailOf(response.json));
		return response.json as T;
	}

	status(signal?: AbortSignal): Promise<Overview> {
		return this.call("GET", "/status", { signal });
	}

	sync(signal?: AbortSignal): Promise<PassResult> {
		return this.call("POST", "/sync", { signal });
	}

	recall(words: string, signal?: AbortSignal, limit = 20): Promise<{ hits: Hit[] }> {
		const query = new URLSearchParams({ q: words, limit: String(limit) });
		return this.call("GET", `/recall?${query.toString()}`, { signal });
	}

	async inbox(signal?: AbortSignal): Promise<Fact[]> {
		return (await this.call<{ facts: Fact[] }>("GET", "/inbox", { signal })).facts;
	}

	decide(fact: Fact, decision: "accept" | "reject", signal?: AbortSignal): Promise<PassResult> {
		const entity = new URLSearchParams({ entity: fact.entity }).toString();
		const path = `/inbox/${encodeURIComponent(fact.record.id)}/${decision}?${entity}`;
		return this.call("POST", path, { ifMatch: fact.etag, signal });
	}

	async conflicts(signal?: AbortSignal): Promise<Conflict[]> {
		return (await this.call<{ conflicts: Conflict[] }>("GET", "/conflicts", { signal })).conflicts;
	}

	resolve(conflict: Conflict, keep: "mine" | "agent", signal?: AbortSignal): Promise<PassResult> {
		return this.call("POST", "/conflicts/resolve", { body: { copy: conflict.copy, keep }, signal });
	}

	async latestReview(signal?: AbortSignal): Promise<string | null> {
		return (await this.call<{ note: string | null }>("GET", "/review/latest", { signal })).note;
	}

	async history(target: string, signal?: AbortSignal, limit = 30): Promise<Change[]> {
		const query = new URLSearchParams({ target, limit: String(limit) });
		return (await this.call<{ changes: Change[] }>("GET", `/history?${query.toString()}`, { signal })).changes;
	}
}
