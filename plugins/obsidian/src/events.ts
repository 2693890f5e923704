/**
 * The API's server-sent events, read as a stream, telling the status bar to refresh when a pass starts or ends
 * anywhere. When the stream cannot be opened or breaks, the caller falls back to polling.
 */

export interface ServerEvent {
	event: string;
	data: string;
}

/** Split what arrived so far into whole events; the rest waits for more text. */
export function parseEvents(buffer: string): { events: ServerEvent[]; rest: string } {
	const events: ServerEvent[] = [];
	const blocks = buffer.replace(/\r\n/g, "\n").split("\n\n");
	const rest = blocks.pop() ?? "";
	for (const block of blocks) {
		let event = "message";
		const data: string[] = [];
		for (const line of block.split("\n")) {
			if (line.startsWith(":")) continue;
			const [field, ...value] = line.split(":");
			const text = value.join(":").replace(/^ /, "");
			if (field === "event") event = text;
			else if (field === "data") data.push(text);
		}
		if (data.length) events.push({ event, data: data.join("\n") });
	}
	return { events, rest };
}

export type Fetch = (url: string, init: { headers: Record<string, string>; signal: AbortSignal }) => Promise<{
	ok: boolean;
	body: ReadableStream<Uint8Array> | null;
}>;

/** Read the stream until it ends, `signal` aborts or it fails; `onEvent` gets each event. Resolves when it stops. */
export async function follow(
	fetcher: Fetch,
	url: string,
	token: string,
	signal: AbortSignal,
	onEvent: (event: ServerEvent) => void,
	onOpen: () => void = () => undefined,
): Promise<void> {
	const response = await fetcher(url, { headers: { Authorization: `Bearer ${token}` }, signal });
	if (!response.ok || !response.body) throw new Error("the event stream was refused");
	onOpen();
	const reader = response.body.getReader();
	const decoder = new TextDecoder();
	let buffer = "";
	try {
		for (;;) {
			const { done, value } = await reader.read();
			if (done) return;
			const parsed = parseEvents(buffer + decoder.decode(value, { stream: true }));
			buffer = parsed.rest;
			parsed.events.forEach(onEvent);
		}
	} finally {
		reader.releaseLock();
	}
}
