// Checks of a blkc --explore page as a reader uses it, run inside the page by
// tests/explore/browser_check.py (appended after the page's own script, so
// that its listeners are in place). Writes its findings as JSON into
// <pre id="blk-check"> for the runner to read from the dumped DOM.
(function () {
  const problems = [];
  const said = (what) => { if (problems.length < 20) problems.push(what); };
  const cols = [...document.querySelectorAll('.col')];
  const title = (c) => c.querySelector('h2').textContent;
  const source = cols.find((c) => title(c) === 'source');
  const codeCols = cols.filter((c) => /^(PTX|SASS)/.test(title(c)));
  if (!source) said('no source column');
  if (!codeCols.length) said('no PTX column');
  const sourceLines = new Set([...source.querySelectorAll('span.s')].map((e) => e.dataset.l));

  // Every instruction belongs to a source line of the file, or to its
  // kernel's prologue: unlinked only before the kernel's first linked one.
  let instructions = 0, prologue = 0;
  for (const col of codeCols) {
    let linkedSeen = false;
    for (const e of col.querySelectorAll('pre > span')) {
      const text = e.textContent;
      if (/\.entry |\.func |^\/\/-{10}|^Function : /.test(text.trim())) linkedSeen = false;
      if (!e.classList.contains('i') && !e.classList.contains('x')) continue; // PTX's, SASS's
      instructions++;
      const l = e.dataset.l;
      if (l === undefined) { said(title(col) + ': an instruction without a line: ' + text); continue; }
      if (l === '0') {
        prologue++;
        if (linkedSeen && !/cuobjdump/.test(title(col)))
          said(title(col) + ': an unlinked instruction after linked ones: ' + text.trim());
      } else {
        linkedSeen = true;
        if (!sourceLines.has(l)) said(title(col) + ': line ' + l + ' is not in the source: ' + text.trim());
      }
    }
  }

  // Clicking a source line lights exactly that line's pieces, in every
  // column, and scrolls each code column to its first one.
  const lit = () => [...document.querySelectorAll('.hi')];
  let clicked = 0, scrolledInView = 0;
  const most = window.BLK_CHECK_MOST_CLICKS || Infinity; // the largest page: a sample of its lines
  for (const s of source.querySelectorAll('span.s')) {
    if (clicked >= most) break;
    const l = s.dataset.l;
    const code = codeCols.map((c) => c.querySelector(':is(.i,.x)[data-l="' + l + '"]')).filter((x) => x);
    if (!code.length) continue;
    s.click();
    clicked++;
    const on = lit();
    const all = document.querySelectorAll('[data-l="' + l + '"]');
    if (on.some((e) => e.dataset.l !== l)) said('line ' + l + ': a piece of another line lit');
    if (on.length !== all.length) said('line ' + l + ': ' + on.length + ' of ' + all.length + ' pieces lit');
    for (const first of code) {
      const col = first.closest('.col').getBoundingClientRect(), r = first.getBoundingClientRect();
      if (r.top >= col.top && r.bottom <= col.bottom) scrolledInView++;
      else said('line ' + l + ': its first instruction in ' + title(first.closest('.col')) + ' not scrolled into view');
    }
  }

  // An instruction, hovered, lights its source line; a prologue one lights nothing.
  let hovered = 0;
  for (const col of codeCols) {
    const linked = col.querySelector(':is(.i,.x):not([data-l="0"])');
    if (!linked) continue;
    linked.dispatchEvent(new MouseEvent('mouseenter'));
    hovered++;
    const s = source.querySelector('span.s[data-l="' + linked.dataset.l + '"]');
    if (!s || !s.classList.contains('hi')) said(title(col) + ': hovering an instruction left its source line dark');
    const unlinked = col.querySelector(':is(.i,.x)[data-l="0"]');
    if (unlinked) {
      unlinked.dispatchEvent(new MouseEvent('mouseenter'));
      if (lit().length) said(title(col) + ': hovering a prologue instruction lit something');
    }
  }

  // The table's rows are tied to their lines too.
  const row = document.querySelector('.tally tr[data-l]:not([data-l="0"])');
  if (row) {
    row.click();
    if (!source.querySelector('span.s[data-l="' + row.dataset.l + '"]').classList.contains('hi'))
      said('clicking a row of the table left its source line dark');
  } else said('no row in the table');

  const out = document.createElement('pre');
  out.id = 'blk-check';
  out.textContent = JSON.stringify({
    problems, instructions, prologue, clicked, scrolledInView, hovered,
    columns: cols.map(title), elements: document.getElementsByTagName('*').length,
    parsedMs: Math.round(performance.now()),
  });
  document.body.appendChild(out);
})();
