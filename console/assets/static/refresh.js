// Refreshes the domain page's live section in place every five seconds.
(function () {
  var live = document.getElementById("live");
  if (!live || !window.fetch) { return; }
  setInterval(function () {
    fetch(live.dataset.fragment, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { live.innerHTML = html; })
      .catch(function () {});
  }, 5000);
})();
