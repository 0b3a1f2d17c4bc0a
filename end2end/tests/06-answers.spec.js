// The Answers page: answer a graph question set offline with two built-in
// methods (NaiveRAG with in-process MiniLM, LightRAG-style), see the cost
// table and its chart, read the two methods' answers side by side with
// their contexts, and import answers from a file (a bad
// file refused with its line numbers).
const { test, expect } = require('@playwright/test');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createProject, openHydrated } = require('./helpers');

test.describe.configure({ mode: 'serial' });

let answersUrl;

test('answer a question set with two methods and compare them side by side', async ({ page, request }) => {
  await createProject(page, 'Answers demo');
  await page.getByRole('button', { name: 'Load the sample corpus' }).click();
  await expect(page.locator('#total-chunks')).toHaveText('5');
  await page.getByRole('link', { name: 'Graph' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.locator('#build-graph').click();
  await expect(page.locator('#graph-stats')).toBeVisible({ timeout: 60_000 });
  await page.getByRole('link', { name: 'Questions' }).click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const q = page.locator('#generate-form');
  await q.locator('input[name="req[node]"]').fill('3');
  await q.locator('input[name="req[edge]"]').fill('2');
  await q.locator('input[name="req[subgraph]"]').fill('1');
  await q.locator('input[name="req[min_hops]"]').fill('10');
  await page.locator('#generate-questions').click();
  await expect(page.locator('table.questions tbody tr[data-question]')).toHaveCount(6, { timeout: 60_000 });

  await page.getByRole('link', { name: 'Answers' }).click();
  await expect(page).toHaveURL(/\/answers$/);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  answersUrl = page.url();
  await expect(page.locator('#no-answers')).toBeVisible();
  await expect(page.locator('.build-panel .llm-line')).toContainText('offline (no LLM)');
  const form = page.locator('#answers-form');
  const params = form.locator('textarea[name="req[params]"]');
  // NaiveRAG comes first, with in-process MiniLM embeddings.
  await expect(params).toHaveValue(/"embedder": "minilm"/);
  await params.fill('{"k": 3}');
  // The price before the run (#39): 6 questions × 1 call, free offline.
  const price = page.locator('#answers-price');
  const stage = price.locator('.plan-stages tbody tr').first();
  await expect(stage.locator('td').first()).toContainText('answers: naive on');
  await expect(stage.locator('td').nth(1)).toHaveText('6');
  await expect(price.locator('.price-total')).toContainText('free');
  await page.locator('#generate-answers').click();
  const rows = page.locator('table.cost-table tbody tr');
  await expect(rows).toHaveCount(1, { timeout: 60_000 });
  await expect(rows.first()).toContainText('naive (k=3)');

  // Choosing another method fills in its default parameters.
  await form.locator('select[name="req[name]"]').selectOption('lightrag');
  await expect(params).toHaveValue(/"mode": "hybrid"/);
  await expect(form.locator('.method-about')).toContainText('dual-level');
  await form.locator('input[name="req[target_words]"]').fill('25');
  // LightRAG asks for keywords first: 2 calls a question.
  await expect(stage.locator('td').nth(1)).toHaveText('12');
  await page.locator('#generate-answers').click();
  await expect(rows).toHaveCount(2, { timeout: 60_000 });
  // (Every row has a "LightRAG" download link: the other row is naive's.)
  const lightrag = rows.filter({ hasNotText: 'naive (k=3)' });
  await expect(lightrag).toContainText('offline (no LLM)');
  await expect(lightrag.locator('td').nth(7)).toHaveText('2.0');
  // Each row names the question set it answered (#39).
  await expect(lightrag.locator('td').nth(2)).toContainText('#');
  const chart = page.locator('img.cost-chart');
  await expect.poll(() => chart.evaluate((el) => el.complete && el.naturalWidth)).toBeGreaterThan(0);
  const svg = await (await request.get(await chart.getAttribute('src'))).text();
  expect(svg).toContain('lightrag');

  // The newest set is shown with the other one beside it.
  const side = page.locator('#side-by-side');
  await expect(side.locator('h2')).toContainText('lightrag');
  await expect(side.locator('.parameters')).toContainText('"mode":"hybrid"');
  await expect(side.locator('.parameters')).toContainText('"target_words":25');
  await expect(side.locator('table.answers thead th')).toHaveText(['Question', /#\d+ lightrag/, /#\d+ naive \(k=3\)/]);
  const answerRows = side.locator('table.answers tbody tr');
  await expect(answerRows).toHaveCount(6);
  const first = answerRows.first();
  await expect(first.locator('td').nth(1).locator('.answer > p.small')).toHaveText(/^25 words · /);
  // NaiveRAG with k = 3: the three nearest chunks, fetched when the answer is opened (#39).
  const naive = first.locator('td').nth(2);
  await expect(naive.locator('.answer-actions')).toContainText(/\(3 pieces, [\d,]+ characters\)/);
  await expect(naive.locator('.contexts')).toHaveCount(0);
  await naive.getByRole('button', { name: 'Open' }).click();
  await expect(naive.locator('.contexts li')).toHaveCount(3);
  await expect(naive.locator('.contexts li').first()).toContainText('chunk');
  await naive.getByRole('button', { name: 'Close' }).click();
  await expect(naive.locator('.contexts')).toHaveCount(0);
});

test('import answers from a file: bad lines named, then a good file lands', async ({ page }) => {
  await openHydrated(page, answersUrl);
  const exported = await page.request.get(
    (await page.locator('table.cost-table tbody tr').first().getByRole('link', { name: 'JSONL' }).getAttribute('href')));
  const lines = (await exported.text()).trim().split('\n').map((l) => JSON.parse(l));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'answers-'));
  const bad = path.join(dir, 'bad.jsonl');
  fs.writeFileSync(bad, [
    JSON.stringify({ question_id: lines[0].question_id, answer: 'Mine.' }),
    JSON.stringify({ question: 'Nobody asked this?', answer: 'x' }),
  ].join('\n'));
  await page.getByText('Import answers from your own system').click();
  const form = page.locator('#import-answers-form');
  await form.locator('input[name="name"]').fill('My RAG');
  await form.locator('input[type="file"]').setInputFiles(bad);
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page.locator('#import-error')).toContainText('line 2: no question of this set has this text');
  await expect(page.locator('table.cost-table tbody tr')).toHaveCount(2);

  const good = path.join(dir, 'good.jsonl');
  fs.writeFileSync(good, lines.map((l) => JSON.stringify({ question: l.question, answer: `Mine: ${l.question}`, latency_ms: 250 })).join('\n'));
  // The panel stayed open with the error.
  await expect(form).toBeVisible();
  await form.locator('input[name="name"]').fill('My RAG');
  await form.locator('input[type="file"]').setInputFiles(good);
  await form.getByRole('button', { name: 'Import' }).click();
  await expect(page).toHaveURL(/answers=\d+/);
  const mine = page.locator('table.cost-table tbody tr').filter({ hasText: 'My RAG' });
  await expect(mine).toContainText('imported');
  await expect(mine.locator('td').nth(5)).toHaveText('0.25');
  await expect(mine.locator('td').nth(4)).toHaveText('—');
  await expect(page.locator('#side-by-side h2')).toContainText('My RAG');
});
