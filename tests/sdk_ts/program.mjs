// A TypeScript-SDK program (@anthropic-ai/claude-agent-sdk) for tests/sdk_ts: one query() whose
// executable is the one the test names, with an in-process MCP tool (tool() + createSdkMcpServer)
// and two hook callbacks. The test passes its case as JSON in COVEY_TS_CASE:
//   modules  the node_modules folder the SDK was installed into (outside the repo)
//   cli      pathToClaudeCodeExecutable (covey's executable, or a Claude Code to compare)
//   cwd, prompt, marker (a file the tool's handler and the hooks append to)
//   options  more of query()'s options (outputFormat, maxThinkingTokens, permissionMode, ...)
//   prompts  (optional) the prompts to send in streaming-input mode, each once the last one's
//            result came, instead of the one `prompt`
//   interruptWhen  (optional) a file: once it exists, the program calls interrupt() (once), and an
//            Interrupt hook callback notes its input
// Every message the SDK yields is printed as one JSON line {"message": ...}; a thrown error
// as {"error": ...} (exit 1). The handlers' calls go to the marker file, one JSON line each.
import { appendFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(process.env.COVEY_TS_CASE);
const require = createRequire(join(spec.modules, "..", "package.json"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { query, tool, createSdkMcpServer } = await load("@anthropic-ai/claude-agent-sdk");
const { z } = await load("zod");

const note = (what) => appendFileSync(spec.marker, JSON.stringify({ ...what, pid: process.pid }) + "\n");

const add = tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
  note({ tool: "add", args });
  return { content: [{ type: "text", text: `sum=${args.a + args.b}` }] };
});
const calc = createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });

const hooks = {
  UserPromptSubmit: [{ hooks: [async (input) => {
    note({ hook: input.hook_event_name, prompt: input.prompt });
    return { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "CONTEXT FROM THE TS HOOK" } };
  }] }],
  PreToolUse: [{ matcher: "mcp__calc__add", hooks: [async (input, toolUseId) => {
    note({ hook: input.hook_event_name, tool_name: input.tool_name, tool_input: input.tool_input, tool_use_id: toolUseId });
    return {};
  }] }],
};

if (spec.interruptWhen) {
  hooks.Interrupt = [{ hooks: [async (input) => {
    note({ hook: input.hook_event_name, input });
    return {};
  }] }];
}

// Streaming input: each prompt once the previous one's turn has ended (its result came).
let resultCame = () => {};
async function* streamed(prompts) {
  for (const text of prompts) {
    const answered = new Promise((resolve) => { resultCame = resolve; });
    yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
    await answered;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
let done = false;
async function interruptOnce(running) {
  while (!done && !existsSync(spec.interruptWhen)) await sleep(50);
  if (!done) note({ interrupted: (await running.interrupt()) ?? null });
}

const options = {
  pathToClaudeCodeExecutable: spec.cli,
  cwd: spec.cwd,
  model: "claude-opus-4-5",  // a model that takes a thinking budget (Claude Code's default thinks adaptively)
  mcpServers: { calc },
  allowedTools: ["mcp__calc__add"],
  hooks,
  stderr: (text) => process.stderr.write(`[cli] ${text}`),
  ...spec.options,
};

try {
  const running = query({ prompt: spec.prompts ? streamed(spec.prompts) : spec.prompt, options });
  const interrupting = spec.interruptWhen ? interruptOnce(running) : null;
  for await (const message of running) {
    process.stdout.write(JSON.stringify({ message }) + "\n");
    if (message.type === "result") resultCame();
  }
  done = true;
  await interrupting;
} catch (error) {
  process.stdout.write(JSON.stringify({ error: String(error?.stack ?? error) }) + "\n");
  process.exitCode = 1;
} finally {
  done = true;  // (an interrupt still waited for would keep node running)
}
