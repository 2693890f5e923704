// A real `vaultsync serve` over a private copy of the repository's example memory, for the plugin's tests. Git and
// HOME point into the temp folder, so nothing touches the machine's own settings.
import { spawn, execFile } from "node:child_process";
import { cpSync, mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const REPO = resolve(import.meta.dirname, "../../..");
export const PYTHON = process.env.VAULTSYNC_PYTHON ?? join(REPO, ".venv/bin/python");
export const TOKEN = `plugin-test-token-${"x".repeat(40)}`;

export function freePort() {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

/** A synced vault from vault-example; returns its folders and the environment its commands need. */
export async function makeVault() {
  const root = mkdtempSync(join(tmpdir(), "vaultsync-plugin-"));
  const home = join(root, "home");
  cpSync(join(REPO, "vault-example"), join(root, "mem"), { recursive: true });
  writeFileSync(join(root, "gitconfig"), "");
  const env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    GIT_CONFIG_GLOBAL: join(root, "gitconfig"),
    GIT_CONFIG_NOSYSTEM: "1",
    VAULTSYNC_TOKEN: TOKEN,
  };
  const config = join(root, "config.toml");
  const cli = (...args) => run(PYTHON, ["-m", "vaultsync.cli", ...args, "--config", config], { env, cwd: REPO });
  await cli("init", "--workspace", join(root, "mem/workspace"), "--life", join(root, "mem/life"), "--vault", join(root, "vault"));
  await cli("sync");
  const tokenFile = join(root, "token");
  writeFileSync(tokenFile, `${TOKEN}\n`);
  return {
    root,
    config,
    env,
    tokenFile,
    workspace: join(root, "mem/workspace"),
    life: join(root, "mem/life"),
    vault: join(root, "vault"),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** `vaultsync serve` on a free port, answering /health; `stop()` ends it. */
export async function serve(vault) {
  const port = await freePort();
  const child = spawn(PYTHON, ["-m", "vaultsync.cli", "serve", "--config", vault.config, "--port", String(port)], {
    env: vault.env,
    cwd: REPO,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let said = "";
  child.stderr.on("data", (chunk) => (said += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000; // waiting for start-up, not a measurement
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${said}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`serve did not answer: ${said}`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return {
    url,
    port,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", done);
        child.kill("SIGTERM");
      }),
  };
}
