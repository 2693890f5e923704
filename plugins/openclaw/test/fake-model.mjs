// A stand-in for an OpenAI-compatible model on 127.0.0.1, so agent turns run offline and their requests can be
// read back. A person's message may hold lines `CALL <tool> <json>`: the model calls those tools one after another,
// then answers with every tool result quoted. Any other message gets a short text reply.
import { createServer } from "node:http";

let calls = 0;
const INTERNAL = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"; // context OpenClaw adds as a user message of its own
const CALL = /^CALL (\w+) (\{.*\})$/gm;

export async function startFakeModel() {
  const requests = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const parsed = body ? JSON.parse(body) : {};
      if (!req.url.endsWith("/chat/completions")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model" }] }));
        return;
      }
      requests.push(parsed);
      send(res, parsed, answer(parsed.messages ?? []));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}

function text(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => part?.text ?? "").join("");
  return "";
}

function answer(messages) {
  const start = messages.findLastIndex((m) => m.role === "user" && !text(m.content).startsWith(INTERNAL));
  const calls = [...text(messages[start]?.content).matchAll(CALL)];
  const results = messages.slice(start + 1).filter((m) => m.role === "tool");
  if (results.length < calls.length) {
    const [, name, args] = calls[results.length];
    return { call: { name, arguments: args } };
  }
  if (calls.length) return { text: results.map((m, i) => `[${i + 1}] ${text(m.content)}`).join("\n") };
  return { text: "Noted, thank you." };
}

function send(res, request, reply) {
  const id = `chatcmpl-${Date.now()}`;
  const toolCalls = reply.call
    ? [{ index: 0, id: `call_${++calls}`, type: "function", function: reply.call }]
    : undefined;
  const finish = reply.call ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (!request.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    const message = { role: "assistant", content: reply.text ?? null, tool_calls: toolCalls };
    res.end(JSON.stringify({ id, object: "chat.completion", model: request.model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta, finishReason = null, extra = {}) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", model: request.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`);
  chunk(reply.call ? { role: "assistant", tool_calls: toolCalls } : { role: "assistant", content: reply.text });
  chunk({}, finish, { usage });
  res.end("data: [DONE]\n\n");
}
