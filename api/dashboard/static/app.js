/* agentledger dashboard: charts (Chart.js, served by the service) and live panels.
   The page polls its data-live URL; each changed panel's HTML (rendered and escaped by the server)
   replaces that panel's live part. No inline script, no eval: the Content-Security-Policy admits
   this file and the vendored chart library only. */
(function () {
  "use strict";

  var charts = [];
  var seen = {};

  function readData() {
    var el = document.getElementById("earnings-data");
    if (!el) return null;
    try { return JSON.parse(el.textContent); } catch (e) { return null; }
  }

  function drawCharts() {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var data = readData();
    if (!data || typeof window.Chart === "undefined") return;
    var base = { animation: false, responsive: true, maintainAspectRatio: false };
    var daily = document.getElementById("chart-daily");
    if (daily) {
      charts.push(new window.Chart(daily, {
        type: "bar",
        data: {
          labels: data.days.map(function (d) { return d.slice(5); }),
          datasets: [
            { label: "Reported", data: data.reported, backgroundColor: "#1f6feb" },
            { label: "Settled on-chain", data: data.settled, backgroundColor: "#1a7f37" }
          ]
        },
        options: Object.assign({}, base, {
          scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "USDC" } } }
        })
      }));
    }
    var sources = document.getElementById("chart-sources");
    if (sources) {
      charts.push(new window.Chart(sources, {
        type: "bar",
        data: { labels: data.sources, datasets: [{ label: "USDC", data: data.amounts, backgroundColor: "#0a4f96" }] },
        options: Object.assign({}, base, { indexAxis: "y", plugins: { legend: { display: false } } })
      }));
    }
  }

  function say(text, stale) {
    var el = document.getElementById("live-status");
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("stale", !!stale);
  }

  function swap(el, html) {
    var open = {};
    el.querySelectorAll("details[open][data-key]").forEach(function (d) { open[d.dataset.key] = true; });
    var doc = new DOMParser().parseFromString("<!doctype html><body>" + html + "</body>", "text/html");
    var nodes = Array.prototype.slice.call(doc.body.childNodes).map(function (n) { return document.adoptNode(n); });
    el.replaceChildren.apply(el, nodes);
    el.querySelectorAll("details[data-key]").forEach(function (d) { if (open[d.dataset.key]) d.open = true; });
  }

  function apply(panels) {
    var changed = false;
    Object.keys(panels).forEach(function (id) {
      var html = panels[id];
      if (seen[id] === html) return;
      var el = document.querySelector('[data-panel="' + id + '"]');
      if (!el) return;
      var active = document.activeElement;
      if (active && active !== document.body && el.contains(active)) return; /* someone is using it */
      seen[id] = html;
      swap(el, html);
      changed = true;
    });
    if (changed) {
      drawCharts();
      say("Updated " + new Date().toLocaleTimeString(), false);
    }
  }

  function live() {
    var url = document.body.dataset.live;
    if (!url) return;
    var interval = parseInt(document.body.dataset.interval || "2000", 10);
    var etag = null;
    function next() { window.setTimeout(tick, interval); }
    function tick() {
      if (document.hidden) { next(); return; }
      var headers = { "Accept": "application/json" };
      if (etag) headers["If-None-Match"] = etag;
      fetch(url, { headers: headers, credentials: "same-origin", cache: "no-store" })
        .then(function (r) {
          if (r.status === 401) { window.location.assign("/dashboard/sign-in"); return null; }
          if (r.status === 304) return null;
          if (!r.ok) throw new Error("HTTP " + r.status);
          etag = r.headers.get("ETag");
          return r.json();
        })
        .then(function (body) { if (body && body.panels) apply(body.panels); })
        .catch(function () { say("Live updates paused: the service does not answer. Retrying.", true); })
        .then(next);
    }
    next();
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form && form.dataset ? form.dataset.confirm : null;
    if (question && !window.confirm(question)) event.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    drawCharts();
    live();
  });
})();
