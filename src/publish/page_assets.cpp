#include "publish/page_assets.h"

namespace fabuild {

const char* const kPageCss = R"CSS(
:root { --ok: #2e8b57; --bad: #c0392b; --none: #8a8a8a; --line: #d9dde3; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; padding: 16px 24px;
       max-width: 1600px; color: #1d232b; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
a { color: #1f5fa8; }
code, .mono { font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.counts span { font-weight: 600; }
.counts .built { color: var(--ok); } .counts .failed { color: var(--bad); } .counts .notbuilt { color: var(--none); }
.indexes a { margin-right: 10px; white-space: nowrap; }
.toolbar { position: sticky; top: 0; background: #fff; padding: 8px 0; z-index: 2; border-bottom: 1px solid var(--line); }
#filter { font-size: 15px; padding: 6px 10px; width: 360px; max-width: 100%; border: 1px solid #aab; border-radius: 4px; }
#shown { color: #555; margin-left: 10px; }
.scroll { overflow-x: auto; }
table.grid { border-collapse: collapse; margin-top: 8px; }
table.grid th, table.grid td { border: 1px solid var(--line); padding: 6px 8px; vertical-align: top; }
table.grid thead th { background: var(--bg); font-weight: 600; white-space: nowrap; text-align: center; }
table.grid tbody th { background: var(--bg); text-align: left; white-space: nowrap; }
td.none { color: var(--none); text-align: center; vertical-align: middle; }
.entry { min-width: 250px; max-width: 380px; padding: 4px 6px; border-left: 4px solid var(--none); margin: 2px 0; background: #fafafa; }
.entry + .entry { margin-top: 6px; }
.entry.built { border-color: var(--ok); } .entry.failed { border-color: var(--bad); background: #fdf3f2; }
.state { font-weight: 700; text-transform: uppercase; font-size: 11px; letter-spacing: .04em; }
.built .state { color: var(--ok); } .failed .state { color: var(--bad); } .notbuilt .state { color: var(--none); }
.meta, .detail, .eid { color: #4a525c; font-size: 12px; }
.eid { word-break: break-all; }
.pip { display: flex; gap: 4px; align-items: flex-start; margin-top: 3px; }
.pip code { background: #eef1f5; padding: 2px 4px; border-radius: 3px; word-break: break-all; flex: 1; }
button.copy { font-size: 11px; padding: 1px 6px; cursor: pointer; }
.hidden { display: none !important; }
td.miss > * { opacity: .3; }
#nomatch { color: var(--bad); margin-top: 8px; }
#timeline { width: 100%; height: auto; border: 1px solid var(--line); background: #fff; }
#timeline .grid { stroke: #eceef1; } #timeline .tick { font-size: 11px; fill: #667; }
#timeline .label { font-size: 11px; fill: #333; text-anchor: end; }
#timeline .in { font-size: 10px; fill: #fff; } #timeline .out { font-size: 10px; fill: #333; }
#timeline .mem { fill: #8aa4c8; fill-opacity: .55; stroke: #4c6f9f; }
#timeline .budget { stroke: var(--bad); stroke-dasharray: 5 3; }
ul.failures li { margin-bottom: 4px; }
footer { margin-top: 28px; color: #667; font-size: 12px; }
)CSS";

const char* const kPageJs = R"JS(
(function () {
  'use strict';
  // Where the indexes are: the baked base URL, else the directory this page was opened from
  // (http:// or file://), so that the pip lines work wherever the tree is served.
  var base = document.body.getAttribute('data-base');
  if (!base) base = location.href.replace(/[?#].*$/, '').replace(/[^\/]*$/, '');
  var spans = document.querySelectorAll('.base');
  for (var i = 0; i < spans.length; i++) spans[i].textContent = base;

  function copied(button) {
    button.textContent = 'copied';
    setTimeout(function () { button.textContent = 'copy'; }, 1200);
  }
  function copyByHand(text, button) {
    var area = document.createElement('textarea');
    area.value = text;
    document.body.appendChild(area);
    area.select();
    try { if (document.execCommand('copy')) copied(button); } catch (e) { /* nothing to copy into */ }
    area.remove();
  }
  document.addEventListener('click', function (event) {
    var button = event.target.closest('button.copy');
    if (!button) return;
    var source = button.getAttribute('data-copy');
    var text = source !== null ? source : button.parentNode.querySelector('code').textContent;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { copied(button); }, function () { copyByHand(text, button); });
    } else {
      copyByHand(text, button);
    }
  });

  var input = document.getElementById('filter');
  var table = document.getElementById('grid');
  var shown = document.getElementById('shown');
  var nomatch = document.getElementById('nomatch');
  var cells = table.querySelectorAll('tbody td');
  var heads = table.querySelectorAll('thead th[data-col]');
  var rows = table.querySelectorAll('tbody tr');

  // Every word must appear in a cell's text (its row, column, ids, states): "cu130 cp312"
  // keeps the cp312 column of CUDA 13.0; "failed" keeps the failed cells.
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var colHit = {}, rowHit = {}, hits = 0;
    for (var i = 0; i < cells.length; i++) {
      var td = cells[i], text = td.getAttribute('data-search');
      var hit = words.every(function (w) { return text.indexOf(w) >= 0; });
      td.classList.toggle('miss', !hit);
      if (hit) {
        colHit[td.getAttribute('data-col')] = true;
        rowHit[td.parentNode.getAttribute('data-row')] = true;
        if (!td.classList.contains('none')) hits++;
      }
    }
    for (var c = 0; c < heads.length; c++) heads[c].classList.toggle('hidden', !colHit[heads[c].getAttribute('data-col')]);
    for (var j = 0; j < cells.length; j++) cells[j].classList.toggle('hidden', !colHit[cells[j].getAttribute('data-col')]);
    for (var r = 0; r < rows.length; r++) rows[r].classList.toggle('hidden', !rowHit[rows[r].getAttribute('data-row')]);
    var total = table.getAttribute('data-cells');
    shown.textContent = words.length ? hits + ' of ' + total + (total === '1' ? ' cell matches' : ' cells match')
                                     : total + (total === '1' ? ' cell' : ' cells');
    nomatch.classList.toggle('hidden', words.length === 0 || hits > 0);
  }
  input.addEventListener('input', apply);
  var fromUrl = new URLSearchParams(location.search).get('q');
  if (fromUrl) input.value = fromUrl;
  apply();
})();
)JS";

}  // namespace fabuild
