"use strict";
// the start page: join the two opponent choices into one parameter; upload a record to replay
const playForm = document.getElementById("play-form");
playForm.addEventListener("submit", () => {
  const a = playForm.elements.opp1.value, b = playForm.elements.opp2.value;
  playForm.elements.opponents.value = a === b ? a : a + "," + b;
  playForm.elements.opp1.disabled = true;
  playForm.elements.opp2.disabled = true;
  if (!playForm.elements.seed.value) playForm.elements.seed.disabled = true;
  setTimeout(() => { playForm.elements.opp1.disabled = false; playForm.elements.opp2.disabled = false; playForm.elements.seed.disabled = false; }, 0);
});
const watchForm = document.getElementById("watch-form");
watchForm.addEventListener("submit", () => {
  if (!watchForm.elements.seed.value) { watchForm.elements.seed.disabled = true; setTimeout(() => { watchForm.elements.seed.disabled = false; }, 0); }
});
document.getElementById("upload").addEventListener("change", async (ev) => {
  const file = ev.target.files[0];
  if (!file) return;
  const msg = document.getElementById("message");
  msg.textContent = "Checking " + file.name + " ...";
  const r = await fetch("/replay?name=" + encodeURIComponent(file.name), { method: "POST", headers: { "Content-Type": "application/json" }, body: await file.text() });
  const data = await r.json();
  if (data.url) location.href = data.url; else msg.textContent = data.error || "refused";
});
