// A real vault for the tests: the repository's example memory, set up with `vaultsync init` and a first sync,
// and a real `vaultsync serve` over it on a free port of 127.0.0.1. Git never reads the machine's own config.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const repo = resolve(import.meta.dirname, "../../..");
const venv = join(repo, ".venv/bin/python");
export const python = process.env.VAULTSYNC_PYTHON ?? (existsSync(venv) ? venv : "python3");
export const TOKEN = "plugin-test-token-" + "y".repeat(40);

function vaultsync(env, ...args) {
	const done = spawnSync(python, ["-m", "vaultsync.cli", ...args], { env, encoding: "utf8", timeout: 300_000 });
	if (done.status !== 0 && done.status !== 1) {
		throw new Error(`vaultsync ${args.join(" ")} exited ${done.status}: ${done.stderr}`);
	}
	return done;
}

/** A synced vault in a fresh temporary folder; `remove()` deletes it. */
export function makeVault() {
	const root = mkdtempSync(join(tmpdir(), "vaultsync-plugin-"));
	mkdirSync(join(root, "home"));
	const gitconfig = join(root, "gitconfig");
	writeFileSync(gitconfig, "[user]\n\tname = Nora\n\temail = nora@example.invalid\n");
	const env = {
		...process.env,
		HOME: join(root, "home"),
		XDG_CONFIG_HOME: join(root, "home/.config"),
		GIT_CONFIG_GLOBAL: gitconfig,
		GIT_CONFIG_NOSYSTEM: "1",
		VAULTSYNC_TOKEN: TOKEN,
		PYTHONPATH: repo,
	};
	cpSync(join(repo, "vault-example"), join(root, "mem"), { recursive: true });
	const config = join(root, "config.toml");
	const [workspace, life, vault] = [join(root, "mem/workspace"), join(root, "mem/life"), join(root, "vault")];
	vaultsync(env, "init", "--workspace", workspace, "--life", life, "--vault", vault, "--config", config);
	vaultsync(env, "sync", "--config", config);
	return {
		root, config, env, workspace, life, vault,
		read: (rel) => readFileSync(join(vault, rel), "utf8"),
		items: (entity) => JSON.parse(readFileSync(join(life, entity, "items.json"), "utf8")),
		writeItems: (entity, doc) => writeFileSync(join(life, entity, "items.json"), JSON.stringify(doc, null, 2) + "\n"),
		write: (rel, text) => writeFileSync(join(vault, rel), text),
		exists: (rel) => existsSync(join(vault, rel)),
		remove: () => rmSync(root, { recursive: true, force: true }),
	};
}

export function freePort() {
	return new Promise((done, fail) => {
		const server = createServer();
		server.on("error", fail);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address();
			server.close(() => done(port));
		});
	});
}

/** `vaultsync serve` over the vault, answering /health; `stop()` ends it. */
export async function serve(vault) {
	const port = await freePort();
	const child = spawn(python, ["-m", "vaultsync.cli", "serve", "--config", vault.config, "--port", String(port)], {
		env: vault.env,
		stdio: ["ignore", "ignore", "pipe"],
	});
	let stderr = "";
	child.stderr.on("data", (chunk) => (stderr += chunk));
	const url = `http://127.0.0.1:${port}`;
	const stop = () =>
		new Promise((done) => {
			if (child.exitCode !== null) return done();
			child.once("exit", () => done());
			child.kill("SIGTERM");
		});
	for (let tries = 0; tries < 600; tries++) {
		if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${stderr}`);
		try {
			if ((await fetch(`${url}/health`)).ok) return { url, port, stop };
		} catch {
			// not listening yet
		}
		await new Promise((done) => setTimeout(done, 100));
	}
	await stop();
	throw new Error(`serve did not answer /health: ${stderr}`);
}

/** The transport the API client gets in the tests: Node's own fetch. */
export async function fetchTransport(request) {
	const response = await fetch(request.url, {
		method: request.method,
		headers: request.headers,
		body: request.body,
		signal: request.signal,
	});
	const text = await response.text();
	let json = null;
	try {
		json = JSON.parse(text);
	} catch {
		json = null;
	}
	return { status: response.status, headers: Object.fromEntries(response.headers), json };
}
