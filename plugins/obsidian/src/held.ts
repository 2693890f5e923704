/**
 * The shrink guard's held changes as the plugin shows them: one line naming the file, the writer and the size
 * before and after, the two commands that answer it, and which holds are new since the last look. Pure (no DOM,
 * no app), so it is tested as is. The API has no route to accept or restore, so the plugin gives the commands.
 */

import type { Held, Overview } from "./api";

/** The held changes of the last pass that ran to its end; none from a server older than the guard. */
export function heldOf(overview: Overview): Held[] {
	return overview.held ?? [];
}

/** "1 change held", "3 changes held". */
export function heldCount(count: number): string {
	return `${count} change${count === 1 ? "" : "s"} held`;
}

/** "agent cut the file (71 → 3 lines)": who did what, and the size before and after. */
export function heldWhat(held: Held): string {
	return `${held.writer} ${held.rule} (${held.before} → ${held.after} ${held.unit})`;
}

/** A path as one shell word, quoted as the command line prints it, so a pasted command runs as shown. */
export function shellWord(text: string): string {
	return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface Answers {
	accept: string;
	restore: string;
}

/** The commands that carry the change (`accept`) or put the last good version back (`restore`). */
export function answers(held: Held): Answers {
	const path = shellWord(held.path);
	return { accept: `vaultsync accept ${path}`, restore: `vaultsync restore ${path}` };
}

/** What makes a hold the same one on the next look: the sizes may move while it waits, the hold does not. */
function identity(held: Held): string {
	return JSON.stringify([held.path, held.side, held.unit, held.rule]);
}

/** The holds in `next` that `previous` did not list: together they get one notice. None on the first look. */
export function newHeld(previous: readonly Held[] | null, next: readonly Held[]): Held[] {
	if (previous === null) return [];
	const known = new Set(previous.map(identity));
	return next.filter((held) => !known.has(identity(held)));
}

/** The notice for holds seen for the first time: the files (a few, then how many more) and where to answer. */
export function heldNotice(fresh: readonly Held[]): string {
	const first = fresh[0];
	const named =
		fresh.length === 1 && first
			? `${first.path}: ${heldWhat(first)}`
			: `${fresh
					.slice(0, 3)
					.map((held) => held.path)
					.join(", ")}${fresh.length > 3 ? ` and ${fresh.length - 3} more` : ""}`;
	const what = fresh.length === 1 ? "A change was held" : `${fresh.length} changes were held`;
	return `${what}, the other side keeps its copy: ${named}. Run "Show held changes" to accept or restore.`;
}
