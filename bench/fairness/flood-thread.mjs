// The fairness bench's flood, on a thread of its own: each loop sends its request back to back
// until told to stop, then reports the answers by kind. The flood's clients are other people's,
// so their answers (megabytes of traces a second) are not read on the victim's event loop.
import { parentPort, workerData } from 'node:worker_threads';

const { baseUrl, loops } = workerData;
let flooding = true;
const answers = new Map();

parentPort.on('message', (message) => {
  if (message === 'stop') flooding = false;
});

await Promise.all(
  loops.map(async ({ path, key, body }) => {
    while (flooding) {
      const res = await fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body,
      });
      const text = await res.text();
      const code = /"(?:errorCode|code)":"(\w+)"/.exec(text)?.[1];
      const kind = `${res.status}${code === undefined ? '' : ` ${code}`}`;
      answers.set(kind, (answers.get(kind) ?? 0) + 1);
    }
  }),
);
parentPort.postMessage(Object.fromEntries(answers));
