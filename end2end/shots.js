// Screenshots for review (not a test): the 5,000-question project, the
// Questions page's benchmark import (a GraphRAG-Bench pair through the form)
// the Answers page's download links, the Evaluations form (its judge
// temperature), an evaluation's settings line and its paper view (Figs.
// 14–17), at 1280 and 390 px.
//   node shots.js BIN DB OUTDIR        (ONLY=paper: the paper view alone;
//   ONLY=judging: the HieraRAG authors' human judging imported as a study;
//   ONLY=ranking: an evaluation's Bradley–Terry ranking;
//   ONLY=lc: an evaluation's length-controlled win rate (#43);
//   ONLY=decide: what a run can decide, planned from a pilot, on the
//   Evaluations form and under a report (#43);
//   ONLY=sequential: a sequential-trials evaluation's report, EVAL=its id (#43);
//   ONLY=section SECTION=jury EVAL=id: any report section (a jury's, #43);
//   ONLY=form: the Evaluations form at its jury field (#43);
//   ONLY=wizard: the experiment wizard's plan from a pilot (#43);
//   ONLY=runs: #46 — the cost table's retrieved text, an answer set's flag,
//   the evaluation form's duration, a report's thin-context note, a job)
const fs = require('fs');
const { serve, browser } = require('./bench/serve');
const { buildLargeProject } = require('./fixtures/large-project');
const { graphragBenchPair } = require('./fixtures/benchmark-files');

(async () => {
  const [bin, db, out] = process.argv.slice(2);
  let ids;
  const idsFile = db + '.ids.json';
  if (fs.existsSync(idsFile)) ids = JSON.parse(fs.readFileSync(idsFile));
  else {
    ids = buildLargeProject(bin, db, 'Papers-size project', console.log);
    fs.writeFileSync(idsFile, JSON.stringify(ids));
  }
  const p = ids.project;
  const { corpus, questions } = graphragBenchPair();
  const { base, server } = await serve(bin, db, 3917);
  const b = await browser();
  try {
    let judging = null;
    for (const width of [1280, 390]) {
      const page = await b.newPage({ viewport: { width, height: 900 } });
      if (process.env.ONLY === 'runs') {
        await page.goto(`${base}/projects/${p}/answers`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('table.cost-table').scrollIntoViewIfNeeded();
        await page.screenshot({ path: `${out}/runs-cost-${width}.png` });
        await page.locator('#side-by-side').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/runs-answers-${width}.png` });
        await page.goto(`${base}/projects/${p}/evaluations`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.waitForSelector('#evaluation-price .time-estimate', { timeout: 120000 });
        await page.locator('#evaluation-price').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/runs-eval-form-${width}.png` });
        // EVAL: another evaluation (one judging a set with thin retrieval).
        await page.goto(`${base}/projects/${p}/evaluations/${process.env.EVAL || ids.evaluation}`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        if (await page.locator('#report-thin-context').count()) {
          await page.locator('#report-thin-context').evaluate((e) => e.scrollIntoView());
        }
        await page.screenshot({ path: `${out}/runs-report-${width}.png` });
        await page.goto(`${base}/projects/${p}/jobs/${ids.answerJob}`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.screenshot({ path: `${out}/runs-job-${width}.png`, fullPage: true });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'ranking') {
        // The full report's Bradley–Terry ranking beside the heatmap.
        await page.goto(`${base}/projects/${p}/evaluations/${ids.evaluation}`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#ranking').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/ranking-${width}.png` });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'lc') {
        // The length-controlled win rate per pair, under the ranking.
        await page.goto(`${base}/projects/${p}/evaluations/${process.env.EVAL || ids.evaluation}`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#length-control').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/lc-${width}.png` });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'decide') {
        await page.goto(`${base}/projects/${p}/evaluations`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#decide summary').click();
        await page.locator('#decide input[name="difference"]').fill('0.1');
        await page.locator('#decide-run').click();
        await page.waitForSelector('#decide .decide-plan', { timeout: 120000 });
        await page.locator('#decide').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/decide-form-${width}.png` });
        await page.locator('#decide .decide-pair').first().evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/decide-form-pair-${width}.png` });
        await page.goto(`${base}/projects/${p}/evaluations/${ids.evaluation}`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#plan-from-pilot input[name="difference"]').fill('0.05');
        await page.locator('#plan-from-pilot-run').click();
        await page.waitForSelector('#plan-from-pilot .decide-plan', { timeout: 120000 });
        await page.locator('#plan-from-pilot').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/decide-report-${width}.png` });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'wizard') {
        await page.goto(`${base}/experiments/new`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#wizard-decide summary').click();
        await page.locator('#wizard-decide-run').click();
        await page.waitForSelector('#wizard-decide .decide-plan', { timeout: 120000 });
        await page.locator('#wizard-decide').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/wizard-decide-${width}.png` });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'form') {
        // The Evaluations form, at its jury field (#43), a jury typed in.
        await page.goto(`${base}/projects/${p}/evaluations`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#jury').fill('simulated:position=1.2,noise=1; offline');
        await page.locator('#jury').evaluate((e) => e.scrollIntoView({ block: 'center' }));
        await page.waitForTimeout(1500);
        await page.screenshot({ path: `${out}/evaluations-jury-${width}.png` });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'sequential' || process.env.ONLY === 'section') {
        // An evaluation's report (EVAL), its top and one section (SECTION: its id).
        const section = process.env.SECTION || 'sequential';
        await page.goto(`${base}/projects/${p}/evaluations/${process.env.EVAL}`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.screenshot({ path: `${out}/${section}-top-${width}.png` });
        await page.locator(`#${section}`).evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/${section}-${width}.png` });
        await page.close();
        continue;
      }
      if (process.env.ONLY === 'judging') {
        // The Studies page's import form, then the imported study's page.
        const dir = require('path').join(__dirname, '../engine/tests/fixtures/hierarag_human');
        const files = ['completed_human/COMPLETED_annotation_batch_annotator_1_HYBRID.xlsx',
          'completed_human/COMPLETED_annotation_batch_annotator_3_HYBRID.xlsx',
          'annotate_files/shared_questions_list.csv', 'complete_analysis_results.json',
          'human_annotation_results_summary.json', 'correlation_stat.txt'].map(f => `${dir}/${f}`);
        await page.goto(`${base}/projects/${p}/studies`);
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.locator('#import-judging summary').click();
        await page.locator('#import-judging').scrollIntoViewIfNeeded();
        await page.screenshot({ path: `${out}/studies-import-${width}.png` });
        if (!judging) {
          await page.locator('#import-judging-form input[name="files"]').setInputFiles(files);
          await page.locator('#import-judging-form').getByRole('button', { name: 'Import' }).click();
          await page.waitForSelector('#imported-report', { timeout: 120000 });
          judging = page.url();
        } else {
          await page.goto(judging);
        }
        await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
        await page.screenshot({ path: `${out}/judging-top-${width}.png` });
        await page.locator('#imported-figures').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/judging-figures-${width}.png`, fullPage: false });
        await page.locator('#study-agreement').evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/judging-agreement-${width}.png` });
        await page.close();
        continue;
      }
      // The paper view: each figure with its caption and numbers.
      await page.goto(`${base}/projects/${p}/evaluations/${ids.evaluation}?view=paper`);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.screenshot({ path: `${out}/paper-top-${width}.png` });
      for (const fig of ['fig14', 'fig15', 'fig16', 'fig17']) {
        await page.locator(`#${fig}`).scrollIntoViewIfNeeded();
        await page.locator(`#${fig} h2`).evaluate((e) => e.scrollIntoView());
        await page.screenshot({ path: `${out}/paper-${fig}-${width}.png` });
      }
      if (process.env.ONLY === 'paper') { await page.close(); continue; }
      await page.goto(`${base}/projects/${p}/questions`);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.getByText('Import a set or a benchmark').click();
      const form = page.locator('#import-form');
      await form.locator('select[name="format"]').selectOption('graphrag-bench');
      await form.locator('input[name="file"]').setInputFiles(questions);
      await form.locator('input[name="corpus"]').setInputFiles(corpus);
      await page.locator('#import-form').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/questions-import-form-${width}.png` });
      await form.getByRole('button', { name: 'Import' }).click();
      await page.waitForSelector('#import-report', { timeout: 120000 });
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.locator('#import-report').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/questions-import-report-${width}.png` });
      await page.locator('table.sets').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/questions-sets-${width}.png` });
      await page.goto(`${base}/projects/${p}/answers`);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.locator('table.cost-table').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/answers-${width}.png` });
      await page.goto(`${base}/projects/${p}/metrics/${ids.metricsRun}`);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.locator('#definitions').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/metrics-${width}.png` });
      await page.locator('table.coarse').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/metrics-tables-1-3-${width}.png` });
      await page.goto(`${base}/projects/${p}/evaluations`);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.locator('#judge-temperature').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${out}/evaluations-form-${width}.png` });
      await page.goto(`${base}/projects/${p}/evaluations/${ids.evaluation}`);
      await page.waitForSelector('body[data-hydrated="true"]', { timeout: 120000 });
      await page.screenshot({ path: `${out}/evaluation-${width}.png` });
      await page.close();
    }
  } finally {
    await b.close();
    server.kill();
  }
})().catch((e) => { console.error(e); process.exit(1); });
