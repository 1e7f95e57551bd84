// npu-codemod report: sort and filter the findings table. No network, no libraries.
"use strict";
(function () {
  var table = document.getElementById("findings");
  if (!table) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var text = document.getElementById("filter-text");
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-column]"));
  var shown = document.getElementById("shown-count");

  function cellKey(row, column) {
    var cell = row.cells[column];
    return cell.getAttribute("data-sort") || cell.textContent;
  }

  function sortBy(header) {
    var column = header.cellIndex;
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = cellKey(a, column), y = cellKey(b, column);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  // A blocking API (its button in the table of blocking APIs) narrows the findings to those
  // whose message names it or a member of it: tf.contrib.slim matches tf.contrib.slim.conv2d.
  var apiChip = document.getElementById("filter-api");
  var apiName = document.getElementById("filter-api-name");
  var apiPattern = null;

  function escapeRegExp(value) { return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }

  function message(row) {
    var span = row.querySelector(".message");
    return span ? span.textContent : "";
  }

  function filterApi(api) {
    apiPattern = api ? new RegExp("(^|[^\\w.])" + escapeRegExp(api) + "(?![\\w])") : null;
    apiName.textContent = api;
    apiChip.hidden = !api;
    applyFilter();
  }

  function applyFilter() {
    var needle = text.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var visible = !needle || row.textContent.toLowerCase().indexOf(needle) !== -1;
      if (apiPattern && !apiPattern.test(message(row))) { visible = false; }
      selects.forEach(function (select) {
        if (select.value && row.getAttribute(select.getAttribute("data-column")) !== select.value) {
          visible = false;
        }
      });
      row.hidden = !visible;
      if (visible) { count += 1; }
    });
    shown.textContent = String(count);
  }

  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    var button = th.querySelector("button");
    if (button) { button.addEventListener("click", function () { sortBy(th); }); }
  });
  Array.prototype.forEach.call(document.querySelectorAll("#blocking-apis tbody tr"), function (tr) {
    tr.addEventListener("click", function () {
      filterApi(tr.getAttribute("data-api"));
      table.scrollIntoView();
    });
  });
  document.getElementById("filter-api-clear").addEventListener("click", function () { filterApi(""); });
  text.addEventListener("input", applyFilter);
  selects.forEach(function (select) { select.addEventListener("change", applyFilter); });
  applyFilter();
})();
