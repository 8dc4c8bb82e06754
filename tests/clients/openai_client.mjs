// The server through the official `openai` package: chat and text
// completions, streamed and not, a forced tool call and a round trip through
// its result, streamed tool calls, response_format json_schema at temperature
// 1 over several seeds, logprobs, errors and the API key. stories260K writes
// nonsense, so the checks are of form and validity, not of text.
//   node openai_client.mjs SERVER_PROGRAM
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { Checks, startServer } from './server.mjs';

const [serverProgram] = process.argv.slice(2);
const version = JSON.parse(readFileSync(new URL('./node_modules/openai/package.json', import.meta.url), 'utf8')).version;

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city for some days.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 8 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city', 'days'],
      additionalProperties: false,
    },
  },
};

// Arguments the weather function's schema allows.
function checkWeatherArguments(text) {
  const args = JSON.parse(text);
  assert.deepEqual(Object.keys(args).sort(), ['city', 'days']);
  assert.equal(typeof args.city, 'string');
  assert.ok(args.city.length <= 8);
  assert.ok(Number.isInteger(args.days) && args.days >= 1 && args.days <= 7);
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

const server = await startServer(serverProgram, ['--api-key', 'test-key']);
const c = new Checks();
try {
  const baseURL = `${server.baseURL}/v1`;
  const client = new OpenAI({ baseURL, apiKey: 'test-key', maxRetries: 0 });

  const models = await client.models.list();
  const model = models.data[0].id;
  c.check(() => assert.equal(model, 'kiln_test_stories260K'));

  const messages = [
    { role: 'system', content: 'You tell stories.' },
    { role: 'user', content: 'A story about a cat.' },
  ];
  const chat = await client.chat.completions.create({ model, messages, max_tokens: 20, temperature: 0 });
  const reply = chat.choices[0].message.content;
  c.check(() => assert.equal(chat.choices[0].message.role, 'assistant'));
  c.check(() => assert.ok(reply.length > 0));
  c.check(() => assert.equal(chat.choices[0].finish_reason, 'length'));
  c.check(() => assert.equal(chat.usage.completion_tokens, 20));
  c.check(() => assert.equal(chat.usage.total_tokens, chat.usage.prompt_tokens + 20));

  const chatStream = await client.chat.completions.create({ model, messages, max_tokens: 20, temperature: 0, stream: true });
  const streamed = await collect(chatStream, (ch) => ch.delta?.content);
  c.check(() => assert.equal(streamed.text, reply));
  c.check(() => assert.equal(streamed.last.choices[0].finish_reason, 'length'));

  const prompt = 'Once upon a time';
  const text = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0 });
  c.check(() => assert.equal(text.usage.completion_tokens, 16));
  const textStream = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stream: true });
  const streamedText = await collect(textStream, (ch) => ch.text);
  c.check(() => assert.equal(streamedText.text, text.choices[0].text));

  const stop = text.choices[0].text.slice(5, 9);
  const stopped = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stop: [stop] });
  c.check(() => assert.equal(stopped.choices[0].text, text.choices[0].text.slice(0, text.choices[0].text.indexOf(stop))));
  c.check(() => assert.equal(stopped.choices[0].finish_reason, 'stop'));

  // A call forced by name, at temperature 1 over several seeds: valid arguments.
  const ask = [{ role: 'user', content: 'Weather in Paris for three days?' }];
  const forced = { type: 'function', function: { name: 'get_weather' } };
  for (let seed = 1; seed <= 3; ++seed) {
    const called = await client.chat.completions.create({ model, messages: ask, tools: [weather], tool_choice: forced, parallel_tool_calls: false, temperature: 1, seed, max_tokens: 200 });
    const choice = called.choices[0];
    c.check(() => assert.equal(choice.finish_reason, 'tool_calls'));
    c.check(() => assert.equal(choice.message.tool_calls.length, 1));
    c.check(() => assert.equal(choice.message.tool_calls[0].function.name, 'get_weather'));
    c.check(() => checkWeatherArguments(choice.message.tool_calls[0].function.arguments));
  }
  // Streamed, the same call in deltas (ids aside).
  const whole = await client.chat.completions.create({ model, messages: ask, tools: [weather], tool_choice: 'required', parallel_tool_calls: false, temperature: 1, seed: 7, max_tokens: 200 });
  const callStream = await client.chat.completions.create({ model, messages: ask, tools: [weather], tool_choice: 'required', parallel_tool_calls: false, temperature: 1, seed: 7, max_tokens: 200, stream: true });
  let streamedName = '', streamedArgs = '', streamedFinish;
  for await (const chunk of callStream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    for (const call of choice.delta?.tool_calls ?? []) {
      streamedName += call.function?.name ?? '';
      streamedArgs += call.function?.arguments ?? '';
    }
    streamedFinish = choice.finish_reason ?? streamedFinish;
  }
  const wholeCall = whole.choices[0].message.tool_calls[0];
  c.check(() => assert.equal(streamedName, wholeCall.function.name));
  c.check(() => assert.equal(streamedArgs, wholeCall.function.arguments));
  c.check(() => assert.equal(streamedFinish, 'tool_calls'));
  // A round trip: the call and its result go back, the model answers.
  const roundTrip = await client.chat.completions.create({
    model, max_tokens: 10, temperature: 0,  // without the tools' description, which would not fit stories260K's 512 positions
    messages: [...ask, whole.choices[0].message, { role: 'tool', tool_call_id: wholeCall.id, content: '{"sky": "clear"}' }],
  });
  c.check(() => assert.ok(['stop', 'length', 'tool_calls'].includes(roundTrip.choices[0].finish_reason)));

  // Structured output at temperature 1: every reply satisfies the schema.
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 12 }, age: { type: 'integer', minimum: 0, maximum: 120 }, pet: { enum: ['cat', 'dog'] } },
    required: ['name', 'age', 'pet'],
    additionalProperties: false,
  };
  for (let seed = 1; seed <= 3; ++seed) {
    const structured = await client.chat.completions.create({
      model, messages, temperature: 1, seed, max_tokens: 80,
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
    });
    const person = JSON.parse(structured.choices[0].message.content);
    c.check(() => assert.deepEqual(Object.keys(person).sort(), ['age', 'name', 'pet']));
    c.check(() => assert.ok(person.name.length <= 12 && Number.isInteger(person.age) && ['cat', 'dog'].includes(person.pet)));
  }

  // logprobs: one per token, the text they spell is the reply, the
  // alternatives sorted and the chosen token's no likelier than the best.
  const scored = await client.chat.completions.create({ model, messages, max_tokens: 8, temperature: 0, logprobs: true, top_logprobs: 3 });
  const tokens = scored.choices[0].logprobs.content;
  c.check(() => assert.equal(tokens.length, 8));
  c.check(() => assert.equal(tokens.map((t) => t.token).join(''), scored.choices[0].message.content));
  for (const t of tokens) {
    c.check(() => assert.ok(t.logprob <= 0 && t.top_logprobs.length === 3));
    c.check(() => assert.ok(t.top_logprobs[0].logprob >= t.top_logprobs[1].logprob && t.top_logprobs[0].logprob >= t.logprob - 1e-6));
  }

  await c.rejects(client.chat.completions.create({ model, messages, max_tokens: 0 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /max_tokens/.test(e.message));
  await c.rejects(client.chat.completions.create({ model, messages: [{ role: 'wizard', content: 'hi' }] }),
    (e) => e instanceof OpenAI.BadRequestError && /role/.test(e.message));
  const wrongKey = new OpenAI({ baseURL, apiKey: 'wrong', maxRetries: 0 });
  await c.rejects(wrongKey.chat.completions.create({ model, messages }),
    (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);

  console.log(`openai client test: ${c.count} checks passed (openai ${version}, node ${process.version})`);
} finally {
  server.stop();
}
