// The chat page at / in a real browser: Debian's Chromium, headless, driven
// through playwright-core. The server asks for an API key; the page asks the
// user for it, then a message typed and sent gets a streamed reply (with
// tokens/s once it ends), the stop button ends a reply early, and with a
// template that opens a <think> block the reply shows as reasoning, apart,
// until thinking is switched off. Screenshots go to OUT_DIR.
//   node chat_page.mjs SERVER_PROGRAM OUT_DIR
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Checks, startServer } from './server.mjs';

const [serverProgram, outDir] = process.argv.slice(2);
const executablePath = '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  console.log('chat page test: skipped, Chromium is not installed (Debian: chromium)');
  process.exit(process.env.KILN_CLIENT_TESTS_REQUIRED === '1' ? 1 : 77);
}

const profile = mkdtempSync(join(tmpdir(), 'kiln-chromium-'));
const template = join(profile, 'think.jinja');
writeFileSync(template, "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}" +
  "{% if add_generation_prompt %}<|im_start|>assistant\n" +
  "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}{% endif %}");
const plain = await startServer(serverProgram, ['--api-key', 'page-key']);
const thinking = await startServer(serverProgram, ['--chat-template-file', template]);
// Nothing but the page's own server is reached: no updates, no sync, no QUIC.
const browser = await chromium.launchPersistentContext(join(profile, 'user-data'), {
  executablePath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
const c = new Checks();
try {
  const page = browser.pages()[0] ?? await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const lastReply = () => page.locator('.msg.assistant').last();

  await page.goto(plain.baseURL + '/');
  await page.locator('#key-panel.shown').waitFor();  // the server said 401: the page asks for the key
  await page.fill('#api-key', 'page-key');
  await page.click('#save-key');
  await page.locator('#model', { hasText: 'kiln_test_stories260K' }).waitFor();
  await page.fill('#temperature', '0');
  await page.fill('#max-tokens', '24');
  await page.fill('#system', 'You tell stories.');
  await page.fill('#input', 'A story about a cat, please.');
  await page.keyboard.press('Enter');
  await lastReply().locator('.stats', { hasText: 'tokens/s' }).waitFor();
  const reply = await lastReply().locator('.content').textContent();
  c.check(() => assert.ok(reply.trim().length > 0));
  const asked = await page.locator('.msg.user').first().textContent();
  c.check(() => assert.equal(asked, 'A story about a cat, please.'));
  await page.screenshot({ path: join(outDir, 'chat_page.png') });

  // The same conversation through the API gives the same reply.
  const api = await fetch(plain.baseURL + '/v1/chat/completions', {
    method: 'POST', headers: { Authorization: 'Bearer page-key', 'Content-Type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'system', content: 'You tell stories.' }, { role: 'user', content: 'A story about a cat, please.' }],
      temperature: 0, max_tokens: 24, top_p: 0.95 }),
  }).then((r) => r.json());
  c.check(() => assert.equal(reply, api.choices[0].message.content));

  // Stop, clicked as soon as the message is sent (in the same task, so
  // before any reply can arrive): the reply says so, and the page takes the
  // next message.
  await page.fill('#input', 'A long one.');
  await page.evaluate(() => {
    document.getElementById('composer').requestSubmit();
    document.getElementById('stop').click();
  });
  await lastReply().locator('.stats', { hasText: 'stopped' }).waitFor();
  await page.locator('#send:not([disabled])').waitFor();
  c.check(() => assert.equal(errors.length, 0, errors.join('\n')));

  // Reasoning apart: the reply of a template that opens the block is reasoning.
  await page.goto(thinking.baseURL + '/');
  await page.locator('#model', { hasText: 'kiln_test_stories260K' }).waitFor();
  await page.fill('#temperature', '0');
  await page.fill('#max-tokens', '12');
  await page.fill('#input', 'Why is the sky blue?');
  await page.click('#send');
  await lastReply().locator('.stats', { hasText: 'tokens/s' }).waitFor();
  const reasoning = await lastReply().locator('.reasoning-text').textContent();
  const content = await lastReply().locator('.content').textContent();
  c.check(() => assert.ok(reasoning.trim().length > 0));
  c.check(() => assert.equal(content, ''));
  await page.screenshot({ path: join(outDir, 'chat_page_reasoning.png') });
  await page.selectOption('#thinking', 'off');
  await page.fill('#input', 'Just answer.');
  await page.click('#send');
  await lastReply().locator('.stats', { hasText: 'tokens/s' }).waitFor();
  const answer = await lastReply().locator('.content').textContent();
  const reasoningHidden = await lastReply().locator('details.reasoning').isHidden();
  c.check(() => assert.ok(answer.trim().length > 0));
  c.check(() => assert.ok(reasoningHidden));
  c.check(() => assert.equal(errors.length, 0, errors.join('\n')));
  console.log(`chat page test: ${c.count} checks passed (Chromium ${browser.browser()?.version() ?? ''}, screenshots in ${outDir})`);
} finally {
  await browser.close();
  plain.stop();
  thinking.stop();
  rmSync(profile, { recursive: true, force: true });
}
