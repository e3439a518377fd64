// Plays `arena mcp` over stdio with the official TypeScript MCP SDK client:
// tools, observe, bad arguments, a greedy forager that must pass foraging
// seed 1, resources and their notifications, and the replay, which must
// verify. Usage: node stdio_test.mjs PATH_TO_ARENA_BINARY
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const arena = process.argv[2];
if (!arena) {
  console.error("usage: node stdio_test.mjs PATH_TO_ARENA");
  process.exit(2);
}
function check(cond, what) {
  if (!cond) {
    throw new Error("FAILED: " + what);
  }
}
const text = (res) => res.content.map((c) => c.text).join("\n");

const out = mkdtempSync(join(tmpdir(), "arena-mcp-ts-"));
const transport = new StdioClientTransport({
  command: arena,
  args: ["mcp", "--scenario", "foraging", "--seed", "1", "--out", out],
  stderr: "pipe",
});
let stderr = "";
transport.stderr?.on("data", (d) => (stderr += d));
const client = new Client({ name: "arena-ts-test", version: "0" });
const updates = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
await client.connect(transport);
check(client.getServerVersion().name === "arena", "server name");

const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
for (const name of ["observe", "move_to", "collect", "idle", "query_world", "query_inventory"]) {
  check(byName[name], `tool ${name} listed`);
}
check(byName.query_world.annotations?.readOnlyHint === true, "query_world is read-only");
check(byName.move_to.annotations?.readOnlyHint === false, "move_to acts");
check(byName.move_to.outputSchema?.required?.includes("observation"), "move_to declares its output");
check(byName.move_to.inputSchema.properties?.target?.type === "array", "move_to's input schema");

await client.subscribeResource({ uri: "arena://observation" });
let res = await client.callTool({ name: "observe", arguments: {} });
check(!res.isError && res.structuredContent.observation.tick === 0, "observe at tick 0");

res = await client.callTool({ name: "move_to", arguments: { target: "north" } });
check(res.isError && text(res).startsWith("INVALID_PARAMS"), "bad arguments: " + text(res));
res = await client.callTool({ name: "query_world", arguments: { radius: 30 } });
check(!res.isError && res.structuredContent.success, "query_world answers");

// The greedy forager of docs/protocol.md's minimal client, through MCP.
res = await client.callTool({ name: "observe", arguments: {} });
let results = null;
for (let i = 0; i < 400 && !results; i++) {
  const obs = res.structuredContent.observation;
  check(obs.tick === i, `decision point ${i}, got ${obs.tick}`);
  const near = obs.nearby_resources;
  let call = { name: "idle", arguments: {} };
  if (near.length > 0 && near[0].distance <= 2.0) {
    call = { name: "collect", arguments: { target_name: near[0].name } };
  } else if (near.length > 0) {
    call = { name: "move_to", arguments: { target: near[0].position } };
  }
  res = await client.callTool(call);
  results = res.structuredContent.results ?? null;
}
check(results, "the episode ended");
const me = results.agents.find((a) => a.id === "agent_001");
check(results.end_reason === "completed" && me.passed && me.score === 100, "agent_001 passed: " + JSON.stringify(me));

const read = await client.readResource({ uri: "arena://results" });
check(JSON.parse(read.contents[0].text).final_state_hash === results.final_state_hash, "arena://results");
res = await client.callTool({ name: "idle", arguments: {} });
check(res.isError && text(res).startsWith("EPISODE_OVER"), "calls after the end are refused");
check(updates.filter((u) => u === "arena://observation").length > 10, "observation updates: " + updates.length);
await client.close();

const written = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
check(written.final_state_hash === results.final_state_hash, "results.json");
const verify = spawnSync(arena, ["replay", join(out, "replay.jsonl"), "--verify", "--quiet"], { encoding: "utf8" });
check(verify.status === 0 && verify.stdout.includes("verified"), "replay verifies: " + verify.stdout + verify.stderr);
console.log(`ts client: ${tools.length} tools; agent_001 passed foraging seed 1 in ${results.ticks} ticks through MCP; replay verified`);
