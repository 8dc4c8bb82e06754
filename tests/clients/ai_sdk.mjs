// The server through the Vercel AI SDK (`ai` with @ai-sdk/openai-compatible):
// generateText and streamText alike, a tool call forced with toolChoice,
// generateObject with a JSON schema at temperature 1 over several seeds, and
// the reasoning of a template that opens a <think> block as the SDK's
// reasoningText. stories260K writes nonsense: the checks are of validity.
//   node ai_sdk.mjs SERVER_PROGRAM
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, jsonSchema, streamText, tool } from 'ai';
import { Checks, startServer } from './server.mjs';

const [serverProgram] = process.argv.slice(2);
const version = JSON.parse(readFileSync(new URL('./node_modules/ai/package.json', import.meta.url), 'utf8')).version;

function provider(baseURL) {
  return createOpenAICompatible({ name: 'kiln', baseURL: `${baseURL}/v1`, apiKey: 'sdk-key', supportsStructuredOutputs: true });
}

const c = new Checks();
const server = await startServer(serverProgram, ['--api-key', 'sdk-key']);
try {
  const model = provider(server.baseURL).chatModel('kiln_test_stories260K');
  const prompt = 'Tell me a story about a dog.';

  const generated = await generateText({ model, prompt, temperature: 0, maxOutputTokens: 16 });
  c.check(() => assert.ok(generated.text.length > 0));
  c.check(() => assert.equal(generated.finishReason, 'length'));
  c.check(() => assert.equal(generated.usage.outputTokens, 16));
  const streamed = streamText({ model, prompt, temperature: 0, maxOutputTokens: 16 });
  let text = '';
  for await (const piece of streamed.textStream) text += piece;
  c.check(() => assert.equal(text, generated.text));

  const getWeather = tool({
    description: 'The weather in a city for some days.',
    inputSchema: jsonSchema({
      type: 'object',
      properties: { city: { type: 'string', maxLength: 8 }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city', 'days'],
      additionalProperties: false,
    }),
  });
  for (let seed = 1; seed <= 3; ++seed) {
    const called = await generateText({
      model, prompt: 'Weather in Oslo for two days?', tools: { get_weather: getWeather },
      toolChoice: { type: 'tool', toolName: 'get_weather' }, temperature: 1, seed, maxOutputTokens: 200,
      providerOptions: { kiln: { parallel_tool_calls: false } },  // the provider passes its own options on as fields
    });
    c.check(() => assert.equal(called.finishReason, 'tool-calls'));
    c.check(() => assert.equal(called.toolCalls.length, 1));
    const input = called.toolCalls[0].input;
    c.check(() => assert.equal(called.toolCalls[0].toolName, 'get_weather'));
    c.check(() => assert.ok(typeof input.city === 'string' && input.city.length <= 8));
    c.check(() => assert.ok(Number.isInteger(input.days) && input.days >= 1 && input.days <= 7));
  }

  const recipe = jsonSchema({
    type: 'object',
    properties: {
      title: { type: 'string', maxLength: 16 },
      steps: { type: 'array', items: { type: 'string', maxLength: 10 }, minItems: 1, maxItems: 3 },
      vegan: { type: 'boolean' },
    },
    required: ['title', 'steps', 'vegan'],
    additionalProperties: false,
  });
  for (let seed = 1; seed <= 3; ++seed) {
    const { object } = await generateObject({ model, schema: recipe, prompt: 'A recipe.', temperature: 1, seed, maxOutputTokens: 120 });
    c.check(() => assert.deepEqual(Object.keys(object).sort(), ['steps', 'title', 'vegan']));
    c.check(() => assert.ok(object.title.length <= 16 && typeof object.vegan === 'boolean'));
    c.check(() => assert.ok(object.steps.length >= 1 && object.steps.length <= 3 && object.steps.every((s) => s.length <= 10)));
  }
} finally {
  server.stop();
}

// A template that opens the block for the model (DeepSeek-R1, Qwen3.5): the
// reply, which never closes it, is all reasoning.
const tempDir = mkdtempSync(join(tmpdir(), 'kiln-ai-sdk-'));
const template = join(tempDir, 'think.jinja');
writeFileSync(template, "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}");
const thinking = await startServer(serverProgram, ['--chat-template-file', template]);
try {
  const model = provider(thinking.baseURL).chatModel('kiln_test_stories260K');
  const thought = await generateText({ model, prompt: 'Why is the sky blue?', temperature: 0, maxOutputTokens: 12 });
  c.check(() => assert.ok(thought.reasoningText.length > 0));
  c.check(() => assert.equal(thought.text, ''));
  const streamed = streamText({ model, prompt: 'Why is the sky blue?', temperature: 0, maxOutputTokens: 12 });
  let reasoning = '';
  for await (const part of streamed.fullStream) if (part.type === 'reasoning-delta') reasoning += part.text;
  c.check(() => assert.equal(reasoning, thought.reasoningText));
} finally {
  thinking.stop();
  rmSync(tempDir, { recursive: true, force: true });
}
console.log(`AI SDK test: ${c.count} checks passed (ai ${version}, node ${process.version})`);
