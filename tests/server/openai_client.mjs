// Chat and text completions, streamed and not, errors and the API key,
// through the official `openai` package against a server this script starts.
//   node openai_client.mjs SERVER_PROGRAM NPM_DIR
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [serverProgram, npmDir] = process.argv.slice(2);
const require = createRequire(`${npmDir}/`);
const openai = require('openai');
const OpenAI = openai.OpenAI ?? openai;
const version = JSON.parse(readFileSync(`${npmDir}/node_modules/openai/package.json`, 'utf8')).version;

// Starts the server on a free port; resolves with the port it printed.
function startServer() {
  const child = spawn(serverProgram, ['--port', '0', '-t', '1', '--api-key', 'test-key'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const port = new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = err.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening: ${err}`)));
  });
  return { child, port };
}

async function collect(stream, pick) {
  let text = '';
  let last;
  for await (const chunk of stream) {
    text += pick(chunk.choices[0] ?? {}) ?? '';
    last = chunk;
  }
  return { text, last };
}

const { child, port } = startServer();
let checks = 0;
const check = (f) => { f(); ++checks; };
try {
  const baseURL = `http://127.0.0.1:${await port}/v1`;
  const client = new OpenAI({ baseURL, apiKey: 'test-key', maxRetries: 0 });

  const models = await client.models.list();
  const model = models.data[0].id;
  check(() => assert.equal(model, 'kiln_test_stories260K'));

  const messages = [
    { role: 'system', content: 'You tell stories.' },
    { role: 'user', content: 'A story about a cat.' },
  ];
  const chat = await client.chat.completions.create({ model, messages, max_tokens: 20, temperature: 0 });
  const reply = chat.choices[0].message.content;
  check(() => assert.equal(chat.choices[0].message.role, 'assistant'));
  check(() => assert.ok(reply.length > 0));
  check(() => assert.equal(chat.choices[0].finish_reason, 'length'));
  check(() => assert.equal(chat.usage.completion_tokens, 20));
  check(() => assert.equal(chat.usage.total_tokens, chat.usage.prompt_tokens + 20));

  const chatStream = await client.chat.completions.create({ model, messages, max_tokens: 20, temperature: 0, stream: true });
  const streamed = await collect(chatStream, (c) => c.delta?.content);
  check(() => assert.equal(streamed.text, reply));
  check(() => assert.equal(streamed.last.choices[0].finish_reason, 'length'));

  const prompt = 'Once upon a time';
  const text = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0 });
  check(() => assert.equal(text.usage.completion_tokens, 16));
  const textStream = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stream: true });
  const streamedText = await collect(textStream, (c) => c.text);
  check(() => assert.equal(streamedText.text, text.choices[0].text));

  const stop = text.choices[0].text.slice(5, 9);
  const stopped = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stop: [stop] });
  check(() => assert.equal(stopped.choices[0].text, text.choices[0].text.slice(0, text.choices[0].text.indexOf(stop))));
  check(() => assert.equal(stopped.choices[0].finish_reason, 'stop'));

  await assert.rejects(client.chat.completions.create({ model, messages, max_tokens: 0 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /max_tokens/.test(e.message));
  ++checks;
  await assert.rejects(client.chat.completions.create({ model, messages: [{ role: 'wizard', content: 'hi' }] }),
    (e) => e instanceof OpenAI.BadRequestError && /role/.test(e.message));
  ++checks;
  const wrongKey = new OpenAI({ baseURL, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(wrongKey.chat.completions.create({ model, messages }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
  ++checks;

  console.log(`openai client test: ${checks} checks passed (openai ${version}, node ${process.version})`);
} finally {
  child.kill('SIGTERM');
}
