// The web board: draws the SVG board, sends moves to the JSON API and shows the model's answer;
// the Games tab steps through arena games with the network's evaluation as a curve.
"use strict";

const POINTS = ["a7", "d7", "g7", "b6", "d6", "f6", "c5", "d5", "e5", "a4", "b4", "c4",
  "e4", "f4", "g4", "c3", "d3", "e3", "b2", "d2", "f2", "a1", "d1", "g1"];
const LINES = [["a7", "g7"], ["g7", "g1"], ["g1", "a1"], ["a1", "a7"], ["b6", "f6"], ["f6", "f2"],
  ["f2", "b2"], ["b2", "b6"], ["c5", "e5"], ["e5", "e3"], ["e3", "c3"], ["c3", "c5"],
  ["d7", "d5"], ["d3", "d1"], ["a4", "c4"], ["e4", "g4"]];
const SVG = "http://www.w3.org/2000/svg";

// A point's place on a board of n × n lattice points (7 for the 24-point boards, 5 for six
// men's morris's), spread over the same 600 × 600 square.
function xy(p, n = 7) {
  const step = 600 / (n - 1);
  return [50 + step * (p.charCodeAt(0) - 97), 50 + step * (n - Number(p[1]))];
}

// The lattice size of a board given by its point names: the farthest column or row.
function latticeSize(points) {
  return Math.max(...points.map((p) => Math.max(p.charCodeAt(0) - 96, Number(p[1]))));
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// Draws the empty board into `svg`: nine men's morris's, or the `points` and `lines` (pairs of
// adjacent points) a game's view gives; `onClick(point)` for clicks on points.
function drawBoard(svg, onClick, points = POINTS, lines = LINES) {
  svg.innerHTML = "";
  svg.dataset.points = points.join(" ");
  const n = latticeSize(points), step = 600 / (n - 1);
  svg.dataset.size = n;
  for (const [a, b] of lines) {
    const [x1, y1] = xy(a, n), [x2, y2] = xy(b, n);
    el("line", { x1, y1, x2, y2, class: "line" }, svg);
  }
  for (let i = 0; i < n; i++) {
    el("text", { x: 50 + step * i - 6, y: 695, class: "coord" }, svg).textContent = "abcdefg"[i];
    el("text", { x: 4, y: 50 + step * i + 7, class: "coord" }, svg).textContent = String(n - i);
  }
  for (const p of points) {
    const [cx, cy] = xy(p, n);
    const c = el("circle", { cx, cy, r: 12, class: "point", id: `${svg.id}-pt-${p}`, "data-point": p }, svg);
    if (onClick) c.addEventListener("click", () => onClick(p));
  }
  el("g", { id: `${svg.id}-pieces` }, svg);
}

function drawPieces(svg, white, black, marks) {
  const g = document.getElementById(`${svg.id}-pieces`);
  g.innerHTML = "";
  const n = Number(svg.dataset.size || 7);
  for (const [color, points] of [["white", white], ["black", black]]) {
    for (const p of points) {
      const [cx, cy] = xy(p, n);
      const cls = ["piece", color];
      if (marks.selected === p) cls.push("selected");
      if (marks.last === p) cls.push("last");
      el("circle", { cx, cy, r: 30, class: cls.join(" "), id: `${svg.id}-piece-${p}`, "data-color": color }, g);
    }
  }
}

async function api(method, path, body) {
  const res = await fetch(`/api${path}`, {
    method,
    headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = res.status === 204 ? {} : await res.json();
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

// ---- Play ----
const board = document.getElementById("board");
let game = null;       // the session's view
let selected = null;   // the piece chosen to move
let busy = false;

function $(id) { return document.getElementById(id); }

function say(text) { $("message").textContent = text; }

function lastTarget(move) {
  if (!move) return null;
  const m = move.replace(/^x/, "");
  return m.includes("-") ? m.split("-")[1] : m;
}

function wdlText(wdl) {
  return `W ${(wdl[0] / 10).toFixed(1)}% D ${(wdl[1] / 10).toFixed(1)}% L ${(wdl[2] / 10).toFixed(1)}%`;
}

function targets() {
  if (!game || game.over || game.to_move !== game.human) return [];
  if (game.removal_pending) return game.legal.map(m => m.slice(1));
  // Placements (points) and moves (from-to) may be legal together: Lasker morris slides while placing.
  if (selected) return game.legal.filter(m => m.startsWith(selected + "-")).map(m => m.split("-")[1]);
  return [...new Set(game.legal.map(m => m.split("-")[0]))];
}

function render() {
  if (!game) return;
  // A new game of another variant: its own board.
  if (board.dataset.variant !== game.variant) {
    drawBoard(board, click, game.points, game.lines);
    board.dataset.variant = game.variant;
  }
  drawPieces(board, game.white, game.black, { selected, last: lastTarget(game.moves[game.moves.length - 1]) });
  const t = new Set(targets());
  for (const p of game.points) $(`board-pt-${p}`).classList.toggle("target", t.has(p));
  const side = game.to_move === "white" ? "White" : "Black";
  const you = game.to_move === game.human ? " (you)" : "";
  $("status").textContent = game.over ? "" :
    `${side}${you} to ${game.removal_pending ? "remove a piece" : game.phase === "placing" ? "place" : game.phase === "flying" ? "fly" : "move"}` +
    ` · in hand ${game.in_hand[0]} / ${game.in_hand[1]} · on board ${game.white.length} / ${game.black.length}`;
  $("result").textContent = game.over ? `${game.result}: ${game.reason}` : "";
  $("moves").innerHTML = game.moves.map(m => `<li>${m}</li>`).join("");
  $("engine").innerHTML = game.engine.length ?
    game.engine.map(a => `<p>${game.opponent} played <b>${a.move}</b>: ${wdlText(a.wdl)}<br>PV ${a.pv.join(" ")} · ${a.nodes} nodes, ${a.ms} ms</p>`).join("") : "";
}

// Runs an API call that returns the game, showing `label` meanwhile and any error after.
async function update(label, call) {
  busy = true;
  say(label);
  try {
    game = await call();
    say("");
  } catch (e) {
    say(e.message);
  } finally {
    busy = false;
    selected = null;
    render();
  }
}

function send(move) {
  return update("thinking…", () => api("POST", `/sessions/${game.id}/move`, { move }));
}

function click(p) {
  if (!game || busy) return;
  if (game.over) return say("The game is over: start a new one.");
  if (game.to_move !== game.human) return say("Wait for the opponent's move.");
  if (game.removal_pending) {
    return game.legal.includes("x" + p) ? send("x" + p) : say(`You closed a mill: remove an opposing piece that is not in a mill, not ${p}.`);
  }
  if (selected && game.legal.includes(`${selected}-${p}`)) return send(`${selected}-${p}`);
  if (game.legal.includes(p)) return send(p);
  if (game.legal.some(m => m.startsWith(p + "-"))) {
    selected = p;
    say("");
  } else if (game.phase === "placing" && !game.legal.some(m => m.includes("-"))) {
    selected = null;
    say(`${p} is not a legal placement.`);
  } else {
    selected = null;
    say(`${p}: not a piece of yours that can move${game.phase === "flying" ? " (you may fly to any empty point)" : game.phase === "placing" ? ", nor an empty point to place on" : ""}.`);
  }
  render();
}

async function newGame(ev) {
  if (ev) ev.preventDefault();
  const kind = $("opponent").value;
  const value = Number($("strength").value);
  const opponent = { kind };
  // Perfect play has no strength to set.
  if (kind === "perfect") {}
  else if ($("strength-kind").value === "time_ms") opponent.time_ms = value;
  else opponent[kind === "model" ? "simulations" : "depth"] = value;
  await update("starting…", () => api("POST", "/sessions", { human: $("human").value, variant: $("variant").value, opponent }));
}

$("new-game").addEventListener("submit", newGame);
let modelVariant = null;  // the variant the server's model plays, if it has one
$("variant").addEventListener("change", () => {
  // The model plays only its own variant: minimax plays every one.
  if ($("opponent").value === "model" && $("variant").value !== modelVariant) {
    $("opponent").value = "minimax";
    if ($("strength-kind").value !== "time_ms") $("strength").value = 4;
  }
});
$("opponent").addEventListener("change", () => {
  if ($("strength-kind").value !== "time_ms") $("strength").value = $("opponent").value === "model" ? 200 : 4;
});
$("undo").addEventListener("click", () => {
  if (game && !busy) update("", () => api("POST", `/sessions/${game.id}/undo`));
});
$("hint").addEventListener("click", async () => {
  if (!game || busy) return;
  busy = true;
  say("thinking…");
  try {
    const { hint } = await api("POST", `/sessions/${game.id}/hint`);
    say(`Hint: ${hint.move} (${wdlText(hint.wdl)})`);
  } catch (e) { say(e.message); } finally { busy = false; }
});

// ---- Games ----
const replayBoard = document.getElementById("replay-board");
let replay = null;
let ply = 0;

function renderReplay() {
  if (!replay) return;
  drawPieces(replayBoard, replay.white_points[ply], replay.black_points[ply], { last: lastTarget(replay.moves[ply - 1]) });
  $("ply").textContent = `ply ${ply} / ${replay.moves.length}`;
  const items = $("replay-moves").children;
  for (let i = 0; i < items.length; i++) items[i].classList.toggle("current", i === ply - 1);
  const curve = $("curve");
  curve.innerHTML = "";
  const n = Math.max(1, replay.white_score.length - 1);
  el("line", { x1: 0, y1: 80, x2: 600, y2: 80, class: "axis" }, curve);
  const pts = replay.white_score.map((s, i) => s === null ? null : `${(600 * i / n).toFixed(1)},${(150 - 140 * s).toFixed(1)}`).filter(Boolean);
  el("polyline", { points: pts.join(" "), class: "curve" }, curve);
  el("line", { x1: 600 * ply / n, y1: 0, x2: 600 * ply / n, y2: 160, class: "cursor" }, curve);
  const s = replay.white_score[ply];
  $("replay-info").textContent = `${replay.white} vs ${replay.black}: ${replay.result}, ${replay.reason}` +
    (s === null || s === undefined ? "" : ` · White's expected score here ${(100 * s).toFixed(0)}%`);
}

async function openGame(index) {
  try {
    replay = await api("GET", `/games/${index}`);
    ply = 0;
    // The record's own board (six men's morris's 16 points, twelve's diagonals).
    if (replayBoard.dataset.variant !== replay.variant) {
      drawBoard(replayBoard, null, replay.points, replay.lines);
      replayBoard.dataset.variant = replay.variant;
    }
    $("replay-moves").innerHTML = replay.moves.map(m => `<li>${m}</li>`).join("");
    for (const row of document.querySelectorAll("#game-list tr.row")) row.classList.toggle("selected", row.dataset.index === String(index));
    renderReplay();
  } catch (e) {
    $("replay-info").textContent = e.message;
  }
}

async function loadGames() {
  const { games } = await api("GET", "/games");
  $("game-list").querySelector("tbody").innerHTML = games.map(g =>
    `<tr class="row" data-index="${g.index}" id="game-${g.index}"><td>${g.index}</td><td>${g.white}</td><td>${g.black}</td><td>${g.result}</td><td>${g.reason}</td></tr>`).join("") ||
    `<tr><td colspan="5">No games: start the server with --games FILE.jsonl (written by eval match --games).</td></tr>`;
  for (const row of document.querySelectorAll("#game-list tr.row")) row.addEventListener("click", () => openGame(row.dataset.index));
}

function step(to) {
  if (!replay) return;
  ply = Math.max(0, Math.min(replay.moves.length, to));
  renderReplay();
}
$("first").addEventListener("click", () => step(0));
$("prev").addEventListener("click", () => step(ply - 1));
$("next").addEventListener("click", () => step(ply + 1));
$("last").addEventListener("click", () => step(replay ? replay.moves.length : 0));

for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
    for (const p of document.querySelectorAll(".panel")) p.classList.toggle("hidden", p.id !== `panel-${tab.dataset.panel}`);
    if (tab.dataset.panel === "games") loadGames();
  });
}

drawBoard(board, click);
drawBoard(replayBoard, null);
api("GET", "/info").then(info => {
  if (!info.model) { $("opponent").value = "minimax"; $("strength").value = 4; }
  modelVariant = info.model_variant;
  if (info.model_variant) $("variant").value = info.model_variant;
  // A server with complete tables (eval serve --tb DIR) offers perfect play.
  if (info.perfect) $("opponent").add(new Option("perfect play", "perfect"));
  newGame();
}).catch(e => say(e.message));
