/**
 * What the status bar says, worked out from the API's answers alone (no DOM, no app), so it is tested as is.
 */

import type { Overview } from "./api";
import { heldCount, heldOf } from "./held";

export interface Shown {
	text: string;
	tooltip: string;
}

export type State =
	| { reachable: true; overview: Overview; inbox: number }
	| { reachable: false; reason: string };

/** "just now", "5 min ago", "3 h ago", "2 d ago": short enough for a status bar. */
export function ago(at: string, now: Date): string {
	const then = Date.parse(at);
	if (Number.isNaN(then)) return "at an unknown time";
	const minutes = Math.floor((now.getTime() - then) / 60_000);
	if (minutes < 1) return "just now";
	if (minutes < 60) return `${minutes} min ago`;
	const hours = Math.floor(minutes / 60);
	if (hours < 24) return `${hours} h ago`;
	return `${Math.floor(hours / 24)} d ago`;
}

/** The outcome of a run in a word, from its exit code (docs/cli.md's table). */
export function outcome(exitCode: number): string {
	if (exitCode === 0) return "ok";
	if (exitCode === 1) return "conflicts";
	if (exitCode === 3) return "busy";
	if (exitCode === 7) return "held";
	return "problems";
}

export function shown(state: State, now: Date): Shown {
	if (!state.reachable) {
		return {
			text: "Vaultsync not reachable",
			tooltip: `${state.reason}. Run "vaultsync doctor" in a terminal: it names the broken link and the command that fixes it (often "vaultsync serve", or "vaultsync service install" to keep it running).`,
		};
	}
	const { overview, inbox } = state;
	const last = overview.last_run;
	const parts = [last ? `synced ${ago(last.at, now)}, ${outcome(last.exit_code)}` : "never synced"];
	const held = heldOf(overview).length;
	if (held) parts.push(heldCount(held));
	const conflicts = overview.open_conflicts.length;
	if (conflicts) parts.push(`${conflicts} conflict${conflicts === 1 ? "" : "s"}`);
	if (inbox) parts.push(`${inbox} proposed`);
	const lines = [last ? `Last run: ${last.kind}, ${last.summary}` : "No run recorded yet"];
	if (held) lines.push(`${heldCount(held)}: the other side keeps its copy until you accept or restore`);
	if (overview.problems.length) lines.push(`${overview.problems.length} standing problem(s)`);
	lines.push("Click for details");
	return { text: `Vaultsync: ${parts.join(" · ")}`, tooltip: lines.join("\n") };
}

/** The conflict copies in `next` that `previous` did not list: each gets one notice. */
export function newConflicts(previous: readonly string[] | null, next: readonly string[]): string[] {
	if (previous === null) return [];
	const known = new Set(previous);
	return next.filter((copy) => !known.has(copy));
}
