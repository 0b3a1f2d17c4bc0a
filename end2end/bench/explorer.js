// Browser benchmark of the graph explorer on the 5,000-node, 20,000-edge
// fixture: time from navigation to the first frame, then frames per second
// and draw time while panning (mouse held down, moved every animation
// frame for 3 s) and while zooming with the wheel.
// Usage: node bench/explorer.js BASE_URL PROJECT_ID
const { chromium } = require('playwright-core');

(async () => {
  const [base, project] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const started = Date.now();
  await page.goto(`${base}/projects/${project}/graph`);
  const canvas = page.locator('#graph-canvas');
  await canvas.waitFor();
  await page.waitForFunction(() => Number(document.querySelector('#graph-canvas')?.dataset.frames || 0) >= 1,
    null, { timeout: 60_000 });
  const firstFrame = Date.now() - started;
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();

  // The gestures are driven inside the page, one input event per animation
  // frame, so the figure is the explorer's and not the test driver's.
  async function measure(label, gesture) {
    const r = await page.evaluate(async ([gesture, cx, cy]) => {
      const c = document.querySelector('#graph-canvas');
      const rect = c.getBoundingClientRect();
      const at = (x, y) => ({ clientX: rect.left + x, clientY: rect.top + y, bubbles: true, pointerId: 1, buttons: 1 });
      const frames0 = Number(c.dataset.frames);
      const draws = [];
      let ticks = 0;
      if (gesture === 'pan') c.dispatchEvent(new PointerEvent('pointerdown', at(cx, cy)));
      const t0 = performance.now();
      while (performance.now() - t0 < 3000) {
        const i = ticks++;
        if (gesture === 'pan') {
          c.dispatchEvent(new PointerEvent('pointermove', at(cx + 150 * Math.sin(i / 15), cy + 100 * Math.cos(i / 15))));
        } else {
          c.dispatchEvent(new WheelEvent('wheel', { ...at(cx, cy), deltaY: (i % 40 < 20) ? -40 : 40, cancelable: true }));
        }
        await new Promise(requestAnimationFrame);
        draws.push(Number(c.dataset.drawMs));
      }
      const secs = (performance.now() - t0) / 1000;
      if (gesture === 'pan') c.dispatchEvent(new PointerEvent('pointerup', at(cx, cy)));
      draws.sort((a, b) => a - b);
      return { fps: (Number(c.dataset.frames) - frames0) / secs, ticks, secs,
               mean: draws.reduce((a, b) => a + b, 0) / draws.length, p95: draws[Math.floor(draws.length * 0.95)] };
    }, [gesture, box.width / 2, box.height / 2]);
    console.log(`${label.padEnd(5)} ${r.fps.toFixed(1)} frames/s drawn over ${r.secs.toFixed(1)} s ` +
      `(${r.ticks} animation frames with input; draw ${r.mean.toFixed(1)} ms mean, ${r.p95.toFixed(1)} ms p95)`);
  }

  await measure('pan', 'pan');
  await measure('zoom', 'zoom');
  console.log(`first frame ${firstFrame} ms after navigation (page, WASM, data and layout-free draw)`);
  await browser.close();
})();
