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

  function applyFilter() {
    var needle = text.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var visible = !needle || row.textContent.toLowerCase().indexOf(needle) !== -1;
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
  text.addEventListener("input", applyFilter);
  selects.forEach(function (select) { select.addEventListener("change", applyFilter); });
  applyFilter();
})();
