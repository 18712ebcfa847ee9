// An agent on @a2a-js/sdk (the official TypeScript A2A client): from the service's agent card, on one
// binding, it streams a hire message, then reads the task back with GetTask. Prints one JSON object:
// the kinds and states of the stream's events, the artifact's text and the task as GetTask answers it.
// Usage: node a2a_js_client.mjs <sdk dist dir> <base URL> <api key> <JSONRPC|HTTP+JSON> <data part JSON>
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

const [sdkDist, base, key, binding, data] = process.argv.slice(2);
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = await import(
  pathToFileURL(`${sdkDist}/client/index.js`).href
);
const { Role, TaskState } = await import(pathToFileURL(`${sdkDist}/index.js`).href);

const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${key}`);
  return fetch(url, { ...init, headers });
};
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
  }),
);
const client = await factory.createFromUrl(base);
const message = {
  messageId: randomUUID(),
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "data", value: JSON.parse(data) } }],
};
const stream = [];
let artifact = null;
let taskId = null;
for await (const event of client.sendMessageStream({ message })) {
  const { $case, value } = event.payload;
  if ($case === "task") taskId = value.id;
  if ($case === "artifactUpdate") artifact = value.artifact.parts[0].content.value;
  const state = $case === "task" || $case === "statusUpdate" ? TaskState[value.status.state] : null;
  stream.push([$case, state]);
}
const task = await client.getTask({ id: taskId });
const failure = task.status.message?.parts.find((p) => p.content?.$case === "data")?.content.value ?? null;
console.log(
  JSON.stringify({
    stream,
    artifact,
    taskId,
    state: TaskState[task.status.state],
    output: task.artifacts.length ? task.artifacts[0].parts[0].content.value : null,
    failure,
  }),
);
