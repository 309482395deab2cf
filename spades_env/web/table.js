"use strict";
// The table page: draws the view the server pushes and sends action ids, nothing more.
// Every rule, legal move and score comes from the server (the package's rules core).
const root = document.getElementById("table");
const TID = root.dataset.tableId;
const SUITS = ["\u2663", "\u2666", "\u2665", "\u2660"];   // clubs, diamonds, hearts, spades
const SUIT_WORDS = ["clubs", "diamonds", "hearts", "spades"];
const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
const PHASE_TEXT = {
  blind: "Blind Nil decision", bid: "Bidding", exchange: "Blind Nil exchange", play: "Playing",
  draw: "Drawing", hand_end: "Hand over", game_end: "Game over", match_end: "Match over",
};
let view = null;
let ws = null;
let sending = false;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
function cardText(c) { return RANKS[c % 13] + SUITS[Math.floor(c / 13)]; }
function cardEl(c, extra) {
  const e = el("span", "card " + SUIT_WORDS[Math.floor(c / 13)] + (extra ? " " + extra : ""));
  e.appendChild(el("span", "rank", RANKS[c % 13]));
  e.appendChild(el("span", "suit", SUITS[Math.floor(c / 13)]));
  e.title = cardText(c);
  return e;
}
function displayOrder(cards) {  // spades, hearts, clubs, diamonds; high to low
  const order = [2, 3, 1, 0];
  return cards.slice().sort((a, b) => order[Math.floor(a / 13)] - order[Math.floor(b / 13)] || b - a);
}
function mini(c) {  // a card as short coloured text
  const e = el("span", "mini " + SUIT_WORDS[Math.floor(c / 13)], cardText(c));
  return e;
}
function suitRows(cards) {  // a hand as a bridge diagram: one line per suit, high to low
  const box = el("div", "diagram");
  for (const suit of [3, 2, 1, 0]) {
    const row = el("div", "suitrow");
    row.appendChild(el("span", "sym " + SUIT_WORDS[suit], SUITS[suit]));
    const ranks = cards.filter((c) => Math.floor(c / 13) === suit).sort((a, b) => b - a).map((c) => RANKS[c % 13]);
    row.appendChild(el("span", "ranks", ranks.length ? ranks.join(" ") : "\u2014"));
    box.appendChild(row);
  }
  return box;
}
function place(seat) {  // where a seat sits on screen: the viewer (or South) at the bottom
  const n = view.num_seats;
  const bottom = view.viewer !== null ? view.viewer : (n === 4 ? 2 : 0);
  const k = (seat - bottom + n) % n;
  return n === 4 ? ["bottom", "left", "top", "right"][k] : ["bottom", "top"][k];
}
function send(msg) {
  if (ws && ws.readyState === 1) ws.send(JSON.stringify(msg));
}
function act(id) {
  if (sending) return;
  sending = true;
  root.querySelectorAll("[data-action]").forEach((b) => b.classList.add("sent"));
  send({ type: "act", action: id, seq: view.seq });
}
function actionButton(id, label, cls) {
  const b = el("button", "act " + (cls || ""), label);
  b.dataset.action = String(id);
  b.addEventListener("click", () => act(id));
  return b;
}

function renderScore(v) {
  const bar = document.getElementById("scorebar");
  bar.replaceChildren();
  v.teams.forEach((t, i) => {
    const mine = v.viewer !== null && (v.num_seats === 4 ? v.viewer % 2 : v.viewer) === i;
    const box = el("div", "team" + (mine ? " mine" : ""));
    box.appendChild(el("div", "tname", t.name + (mine ? " (you)" : "")));
    box.appendChild(el("div", "tscore", String(t.score)));
    const bid = t.contract > 0 ? `bid ${t.contract}, won ${t.won}` : `won ${t.won}`;
    box.appendChild(el("div", "tsmall", `${bid} · bags ${t.bags}` + (v.episode === "match" ? ` · games ${t.games}` : "")));
    bar.appendChild(box);
  });
  const info = el("div", "info");
  const names = v.num_seats === 4 ? ["N", "E", "S", "W"] : ["P0", "P1"];
  info.appendChild(el("div", "phase", PHASE_TEXT[v.phase] || v.phase));
  let where = `Hand ${v.hand_no}` + (v.episode === "match" ? ` · game ${v.game_no}` : "") + ` · to ${v.target}`;
  if (v.kind === "replay") where = `Replay: hand ${v.hand_index} of ${v.hands} · move ${v.pos} of ${v.total}`;
  info.appendChild(el("div", "tsmall", where));
  info.appendChild(el("div", "tsmall", `Dealer ${names[v.dealer]}` + (v.spades_broken ? " · spades broken" : "")));
  bar.appendChild(info);
}

function renderSeat(v, s) {
  const box = document.getElementById("seat-" + place(s.seat));
  box.replaceChildren();
  box.dataset.seat = s.name;
  box.classList.toggle("to-act", v.to_act === s.seat);
  const head = el("div", "seathead");
  const who = s.seat === v.viewer ? "You" : s.player;
  head.appendChild(el("span", "sname", `${s.name} · ${who}`));
  if (v.dealer === s.seat) head.appendChild(el("span", "badge dealer", "dealer"));
  if (v.to_act === s.seat) head.appendChild(el("span", "badge turn", s.seat === v.viewer ? "your turn" : "to play"));
  box.appendChild(head);
  const bid = s.bid === null ? "no bid yet" : `bid ${s.bid}`;
  const think = v.think && v.think[s.name] > 0.3 && s.seat !== v.viewer ? ` · thought ${v.think[s.name].toFixed(1)} s` : "";
  box.appendChild(el("div", "seatline", `${bid} · tricks ${s.tricks}${think}`));
  const hand = el("div", "hand");
  const legalIds = new Set(v.legal.map((a) => a.id));
  if (s.hand !== null && s.seat !== v.viewer) {
    box.appendChild(suitRows(s.hand));
  } else if (s.hand !== null) {
    const best = v.hint && !v.hint.error ? v.hint.best : -1;
    for (const c of displayOrder(s.hand)) {
      const isLegal = legalIds.has(c);
      const e = cardEl(c, isLegal ? "legal" : (s.seat === v.viewer && v.legal.length ? "dim" : ""));
      if (c === best) e.classList.add("hinted");
      if (isLegal) { e.dataset.action = String(c); e.addEventListener("click", () => act(c)); e.setAttribute("role", "button"); }
      hand.appendChild(e);
    }
  } else if (s.hidden_blind) {
    hand.appendChild(el("span", "note", "Your cards stay face down until you choose: Blind Nil or see them."));
    for (let i = 0; i < s.count; i++) hand.appendChild(el("span", "card back"));
  } else {
    for (let i = 0; i < s.count; i++) hand.appendChild(el("span", "card back small"));
    if (s.count) hand.appendChild(el("span", "count", ` ${s.count}`));
  }
  box.appendChild(hand);
  if (s.passed && (s.passed.length || s.received.length)) {
    const ex = el("div", "exchange-line");
    const big = s.seat === v.viewer;
    ex.appendChild(el("span", "", big ? "You passed " : "passed "));
    s.passed.forEach((c) => ex.appendChild(big ? cardEl(c, "tiny") : mini(c)));
    if (!s.passed.length) ex.appendChild(el("span", "", "nothing yet"));
    ex.appendChild(el("span", "", big ? " · you received " : " · got "));
    s.received.forEach((c) => ex.appendChild(big ? cardEl(c, "tiny") : mini(c)));
    if (!s.received.length) ex.appendChild(el("span", "", "nothing yet"));
    box.appendChild(ex);
  }
}

function renderCenter(v) {
  const c = document.getElementById("center");
  c.replaceChildren();
  const names = v.num_seats === 4 ? ["N", "E", "S", "W"] : ["P0", "P1"];
  if (v.trick.length) {
    c.appendChild(el("div", "trickno", `Trick ${v.trick_no} · ${names[v.trick[0].seat]} led`));
    for (const t of v.trick) {
      const e = cardEl(t.card, "played at-" + place(t.seat));
      e.title = `${names[t.seat]} played ${cardText(t.card)}`;
      c.appendChild(e);
    }
  } else if (v.last_trick && (v.phase === "play" || v.summary)) {
    c.appendChild(el("div", "trickno", `Last trick to ${names[v.last_trick.winner]}`));
    for (const t of v.last_trick.cards) {
      const e = cardEl(t.card, "played faded at-" + place(t.seat) + (t.seat === v.last_trick.winner ? " winner" : ""));
      c.appendChild(e);
    }
  } else if (v.phase === "bid" || v.phase === "blind") {
    c.appendChild(el("div", "trickno", "Bidding"));
  }
  if (v.shown_card !== null && v.shown_card !== undefined) {
    const d = el("div", "shown");
    d.appendChild(el("span", "", "Shown card: "));
    d.appendChild(cardEl(v.shown_card));
    c.appendChild(d);
  }
}

function renderActions(v) {
  const box = document.getElementById("actions");
  box.replaceChildren();
  const legal = new Map(v.legal.map((a) => [a.id, a.label]));
  if (v.over) {
    box.appendChild(el("div", "result", v.result));
    const again = el("a", "button", "New game");
    again.href = "/";
    box.appendChild(again);
    return;
  }
  if (!legal.size) {
    if (v.mode === "play" && !v.summary) {
      const names = v.num_seats === 4 ? ["N", "E", "S", "W"] : ["P0", "P1"];
      box.appendChild(el("div", "prompt", v.to_act >= 0 ? `Waiting for ${names[v.to_act]} (${v.seats[v.to_act].player})...` : ""));
    }
    return;
  }
  const prompt = el("div", "prompt");
  box.appendChild(prompt);
  if (v.phase === "blind") {
    prompt.textContent = "Before you see your cards: bid Blind Nil (win no trick, for double the Nil points; you and your partner then exchange cards), or look at your cards and bid normally.";
    box.appendChild(actionButton(66, "Blind Nil", "big"));
    box.appendChild(actionButton(67, "See my cards", "big"));
  } else if (v.phase === "bid") {
    prompt.textContent = "Your bid: how many tricks you will take (Nil: you promise to take none).";
    const row = el("div", "bids");
    for (let b = 0; b <= 13; b++) {
      const id = 52 + b;
      if (legal.has(id)) row.appendChild(actionButton(id, b === 0 ? "Nil" : String(b)));
      else { const d = el("button", "act off", b === 0 ? "Nil" : String(b)); d.disabled = true; row.appendChild(d); }
    }
    box.appendChild(row);
  } else if (v.phase === "exchange") {
    const me = v.seats[v.viewer];
    const partnerBlind = v.seats[(v.viewer + 2) % 4].bid === "Blind Nil";
    prompt.textContent = `Blind Nil exchange: click a card from your hand to pass it to your partner (${v.exchange_cards} card${v.exchange_cards > 1 ? "s" : ""} each way; ${me.passed.length} passed so far). ` +
      (partnerBlind ? "Your partner bid Blind Nil: give them low cards." : "You bid Blind Nil: pass your high cards.");
  } else if (v.phase === "draw") {
    prompt.textContent = "Keep the shown card (then the next one is discarded) or discard it (then you take the next one).";
    box.appendChild(actionButton(68, "Keep it", "big"));
    box.appendChild(actionButton(69, "Discard it", "big"));
  } else if (v.phase === "play") {
    prompt.textContent = v.trick.length ? "Your turn: click a highlighted card (you must follow the suit led if you can)." : "Your lead: click a highlighted card.";
  }
}

function renderControls(v) {
  const box = document.getElementById("controls");
  box.replaceChildren();
  if (v.kind === "replay") {
    const steps = [["start", "|\u25c0 start"], ["prev_hand", "\u00ab hand"], ["prev_trick", "\u25c0\u25c0 trick"], ["prev", "\u25c0 move"],
      ["next", "move \u25b6"], ["next_trick", "trick \u25b6\u25b6"], ["next_hand", "hand \u00bb"], ["end", "end \u25b6|"]];
    for (const [to, label] of steps) {
      const b = el("button", "ctl", label);
      b.dataset.seek = to;
      b.addEventListener("click", () => send({ type: "seek", to }));
      box.appendChild(b);
    }
    const r = el("input", "slider");
    r.type = "range"; r.min = "0"; r.max = String(v.total); r.value = String(v.pos);
    r.addEventListener("change", () => send({ type: "seek", to: Number(r.value) }));
    box.appendChild(r);
    if (v.humans && v.humans.length) box.appendChild(el("span", "muted", " human seat: " + v.humans.map((h) => v.seats[h].name).join(", ")));
    return;
  }
  const speed = el("select", "ctl");
  speed.id = "speed";
  for (const s of ["instant", "fast", "normal", "slow"]) {
    const o = el("option", "", "bots: " + s);
    o.value = s; if (s === v.speed) o.selected = true;
    speed.appendChild(o);
  }
  speed.addEventListener("change", () => send({ type: "speed", value: speed.value }));
  box.appendChild(speed);
  if (v.mode === "watch") {
    const p = el("button", "ctl", v.paused ? "\u25b6 resume" : "\u2016 pause");
    p.id = "pause";
    p.addEventListener("click", () => send({ type: v.paused ? "resume" : "pause" }));
    box.appendChild(p);
    const st = el("button", "ctl", "step \u25b6");
    st.id = "step";
    st.addEventListener("click", () => send({ type: "step" }));
    box.appendChild(st);
    const lab = el("label", "ctl");
    const cb = el("input"); cb.type = "checkbox"; cb.id = "show-hands"; cb.checked = v.show_hands;
    cb.addEventListener("change", () => send({ type: "show_hands", value: cb.checked }));
    lab.appendChild(cb); lab.appendChild(document.createTextNode(" show all hands"));
    box.appendChild(lab);
  } else {
    const lab = el("label", "ctl");
    const cb = el("input"); cb.type = "checkbox"; cb.id = "hint-toggle"; cb.checked = !!v.hint || !!window._hintOn;
    cb.addEventListener("change", () => { window._hintOn = cb.checked; send({ type: "hint", value: cb.checked }); });
    lab.appendChild(cb); lab.appendChild(document.createTextNode(" hint from the reference agent"));
    box.appendChild(lab);
  }
  if (v.record) box.appendChild(el("span", "muted small", " saved as " + v.record));
}

function renderSummary(v) {
  const box = document.getElementById("summary");
  const s = v.summary;
  if (!s) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  box.replaceChildren();
  box.appendChild(el("h3", "", s.outcome ? `Hand over: ${s.outcome}` : "Hand over"));
  const t = el("table");
  const head = el("tr");
  ["", ...s.teams.map((x) => x.team)].forEach((h) => head.appendChild(el("th", "", h)));
  t.appendChild(head);
  const row = (label, f) => {
    const r = el("tr");
    r.appendChild(el("td", "", label));
    s.teams.forEach((x) => r.appendChild(el("td", "", f(x))));
    t.appendChild(r);
  };
  const sign = (n) => (n > 0 ? "+" + n : String(n));
  row("Contract", (x) => (x.contract > 0 ? `bid ${x.contract}, won ${x.won}: ${x.made ? "made" : "set"}` : `no contract (won ${x.won})`));
  row("Contract points", (x) => sign(x.contract_points));
  row("Nil", (x) => (x.nils.length ? x.nils.map((n) => `${n.seat} ${n.bid} ${n.made ? "made" : "failed (" + n.tricks + " tricks)"} ${sign(n.points)}`).join("; ") : "-"));
  row("Bags this hand", (x) => sign(x.bags_won));
  row("Bag penalty", (x) => (x.bag_penalty ? sign(x.bag_penalty) : "-"));
  row("Score change", (x) => sign(x.change));
  row("Score", (x) => `${x.score} (bags ${x.bags_after})`);
  box.appendChild(t);
  if (v.kind === "table" && v.mode === "play" && !v.over) {
    const b = el("button", "big", "Continue");
    b.id = "continue";
    b.addEventListener("click", () => send({ type: "continue", seq: v.seq }));
    box.appendChild(b);
  } else if (v.kind === "table" && v.over) {
    box.appendChild(el("div", "muted", v.result));
  }
}

function renderHint(v) {
  const box = document.getElementById("hint");
  box.replaceChildren();
  if (!v.hint) return;
  if (v.hint.error) { box.textContent = v.hint.error; return; }
  box.appendChild(el("div", "", `Hint: ${v.hint.agent} (${v.hint.note}) would choose`));
  for (const a of v.hint.top) box.appendChild(el("div", "hintrow", `${a.label.length <= 3 && a.id < 52 ? cardText(a.id) : a.label}  ${(a.p * 100).toFixed(0)}%`));
}

function render(v) {
  view = v;
  sending = false;
  root.dataset.phase = v.summary ? v.summary.phase : v.phase;
  root.dataset.toAct = String(v.summary ? -1 : v.to_act);
  root.dataset.seq = String(v.seq);
  root.dataset.mode = v.mode;
  root.dataset.over = v.over ? "1" : "0";
  if (v.kind === "replay") root.dataset.pos = String(v.pos);
  renderScore(v);
  for (const p of ["top", "left", "right", "bottom"]) document.getElementById("seat-" + p).replaceChildren();
  document.getElementById("felt").classList.toggle("two", v.num_seats === 2);
  v.seats.forEach((s) => renderSeat(v, s));
  renderCenter(v);
  renderActions(v);
  renderControls(v);
  renderSummary(v);
  renderHint(v);
  const log = document.getElementById("log");
  log.replaceChildren();
  for (const line of v.events) log.appendChild(el("li", "", line));
  log.scrollTop = log.scrollHeight;
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${proto}//${location.host}/ws/${TID}`);
  ws.onmessage = (ev) => {
    const data = JSON.parse(ev.data);
    const msg = document.getElementById("message");
    if (data.kind === "error") {
      sending = false;
      root.querySelectorAll(".sent").forEach((b) => b.classList.remove("sent"));
      msg.textContent = data.message;
      msg.dataset.error = "1";
      return;
    }
    msg.textContent = "";
    delete msg.dataset.error;
    render(data);
    root.dataset.drawnAt = String(performance.now());
  };
  ws.onclose = () => {
    const msg = document.getElementById("message");
    msg.textContent = "Connection to the server lost: reload the page to continue this game.";
  };
}
connect();
