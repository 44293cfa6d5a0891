/**
 * The page's only script, hand-written and inlined (no framework, nothing fetched): hover tips on
 * every `data-tip` mark, sorting of `table.sortable` by a click on a column head, and the findings'
 * severity filter. The text is static: nothing from a capture is ever placed inside it.
 */
export const CLIENT_SCRIPT = `
(function () {
  'use strict';
  var tip = document.getElementById('tip');
  document.addEventListener('mouseover', function (e) {
    var t = e.target && e.target.closest ? e.target.closest('[data-tip]') : null;
    if (!t) { tip.hidden = true; return; }
    tip.textContent = t.getAttribute('data-tip');
    tip.hidden = false;
  });
  document.addEventListener('mousemove', function (e) {
    if (tip.hidden) return;
    var x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    tip.style.left = Math.max(4, x) + 'px';
    tip.style.top = (e.clientY + 16) + 'px';
  });

  // Sorting: a cell's data-v (numbers) or its text; a second click reverses.
  function key(td) {
    var v = td.getAttribute('data-v');
    return v !== null ? Number(v) : td.textContent.trim().toLowerCase();
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.tabIndex = 0;
      th.addEventListener('click', function () { sortBy(table, th, col); });
      th.addEventListener('keydown', function (e) { if (e.key === 'Enter') sortBy(table, th, col); });
    });
  });
  function sortBy(table, th, col) {
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  // Severity filter of a capture's findings.
  Array.prototype.forEach.call(document.querySelectorAll('.sevfilter'), function (box) {
    var scope = document.getElementById(box.getAttribute('data-scope'));
    function apply() {
      var on = {};
      Array.prototype.forEach.call(box.querySelectorAll('input'), function (i) { on[i.value] = i.checked; });
      var shown = 0;
      Array.prototype.forEach.call(scope.querySelectorAll('tr.finding'), function (r) {
        var ok = on[r.getAttribute('data-sev')];
        r.hidden = !ok;
        if (ok) shown++;
      });
      Array.prototype.forEach.call(scope.querySelectorAll('details.flowfindings'), function (d) {
        d.hidden = d.querySelectorAll('tr.finding:not([hidden])').length === 0;
      });
      box.querySelector('.shown').textContent = shown + ' shown';
    }
    box.addEventListener('change', apply);
    apply();
  });
})();
`;
