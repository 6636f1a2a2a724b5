// The live tail: rows arrive as server-sent events, new ones only unless
// the page says from=start; pause stops drawing
// them (and keeps what arrives meanwhile) until resumed.
(function () {
  var table = document.getElementById("tail");
  if (!table) return;
  var paused = false, held = [];
  var button = document.getElementById("pause"), state = document.getElementById("state");
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) { var pre = document.createElement("pre"); pre.className = cls; pre.textContent = text; td.appendChild(pre); }
    else td.textContent = text;
    tr.appendChild(td);
  }
  function draw(r) {
    var tr = document.createElement("tr");
    tr.className = "record";
    cell(tr, r.Topic + " " + r.Position);
    cell(tr, r.Time);
    cell(tr, r.Kind + (r.Operation ? " " + r.Operation : ""));
    cell(tr, (r.From || "") + " → " + (r.To || "*"));
    cell(tr, r.Error ? r.Error : r.Body, "body " + r.BodyFormat);
    table.appendChild(tr);
  }
  // The browser resumes a dropped stream with the last event's id (each
  // partition's next offset), so a reconnect neither replays nor skips.
  var events = new EventSource("/tail/events?from=" + encodeURIComponent(table.dataset.from) + "&topic=" + encodeURIComponent(table.dataset.topic));
  events.addEventListener("record", function (e) {
    var r = JSON.parse(e.data);
    if (paused) { held.push(r); state.textContent = "paused, " + held.length + " new"; return; }
    draw(r);
  });
  events.onerror = function () { state.textContent = paused ? state.textContent : "reconnecting"; };
  events.onopen = function () { if (!paused) state.textContent = "following"; };
  button.addEventListener("click", function () {
    paused = !paused;
    button.textContent = paused ? "resume" : "pause";
    if (!paused) { held.forEach(draw); held = []; state.textContent = "following"; }
    else state.textContent = "paused";
  });
})();

// The overview refreshes itself, so a console left open shows what needs
// attention now; a hidden tab does not read the log.
(function () {
  if (!document.getElementById("attention")) return;
  setInterval(function () { if (!document.hidden) location.reload(); }, 10000);
})();
