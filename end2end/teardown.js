// After the browser tests: the database they shared (with the papers-size
// project of 13-scale.spec.js it holds about 2 GB) is removed with its
// folder, which playwright.config.js made for this run.
const fs = require('fs');
const os = require('os');
const path = require('path');

module.exports = async () => {
  const db = process.env.ASSAY_E2E_DB;
  if (!db) return;
  const dir = path.dirname(db);
  // Only a folder this run made under the temporary directory.
  if (dir.startsWith(os.tmpdir()) && path.basename(dir).startsWith('assay-e2e-')) {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};
