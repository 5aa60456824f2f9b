// chatgate operator dashboard: one ES module (plus chart.js), no framework, no build step.
// The API token lives in sessionStorage and travels only in the Authorization header (never a
// cookie), so another site cannot make this browser act on the gateway. Live data comes from
// /api/stream (Server-Sent Events read with fetch, since EventSource cannot send headers).

import { colorOf, latencyChart, ms, turnsChart } from "./chart.js";

const TOKEN_KEY = "chatgate:dashboard:token";
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem(TOKEN_KEY) || "", abort: null, backoff: 0, started: null, restarted: false };
const RESTART_NOTICE_S = 60; // how long "the gateway restarted" stays up after the page saw it

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") el.className = value;
    else if (name === "onclick") el.addEventListener("click", value);
    else if (value !== null && value !== undefined && value !== false) el.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) el.append(child);
  }
  return el;
}

function auth() {
  return { Authorization: `Bearer ${state.token}` };
}

function setConn(kind, text) {
  $("conn").dataset.state = kind;
  $("conn").textContent = text;
}

function banner(text) {
  $("banner").textContent = text || "";
  $("banner").hidden = !text;
}

function toast(text) {
  $("toast").textContent = text;
  $("toast").hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => ($("toast").hidden = true), 4000);
}

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

// --- signing in and the live stream --------------------------------------------------------

function signOut(why) {
  state.abort?.abort();
  state.token = "";
  sessionStorage.removeItem(TOKEN_KEY);
  $("board").hidden = true;
  $("signout").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = why || "";
  setConn("offline", "signed out");
  $("token").focus();
}

async function connect() {
  if (!state.token) return signOut("");
  state.abort?.abort();
  const control = new AbortController();
  state.abort = control;
  let response;
  try {
    response = await fetch("/api/stream", { headers: auth(), signal: control.signal, cache: "no-store" });
  } catch {
    return control.signal.aborted ? undefined : reconnect();
  }
  if (response.status === 401) {
    return signOut("That token was refused. (A daemon's local token changes when it restarts.)");
  }
  if (!response.ok) return reconnect();
  $("signin").hidden = true;
  $("signout").hidden = false;
  try {
    await readEvents(response.body, onEvent);
  } catch {
    // the connection dropped: the daemon stopped, restarted or the network went away
  }
  if (!control.signal.aborted) reconnect();
}

async function readEvents(body, handle) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      let data = "";
      for (const line of chunk.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trimStart();
      }
      if (data) handle(event, JSON.parse(data));
    }
  }
}

function reconnect() {
  setConn("offline", "reconnecting…");
  state.backoff = Math.min(state.backoff ? state.backoff * 2 : 500, 5000);
  setTimeout(connect, state.backoff);
}

function onEvent(kind, data) {
  if (kind === "bye") {
    banner("The gateway is shutting down; this page reconnects when it is back.");
    return;
  }
  if (kind !== "snapshot") return;
  state.backoff = 0;
  setConn("live", "live");
  const started = data.status.pid_started_at;
  if (state.started !== null && started !== state.started) state.restarted = true;
  if (state.restarted && data.now - started < RESTART_NOTICE_S) {
    banner(`The gateway restarted ${duration(data.now - started)} ago; showing the new process.`);
  } else if (!data.status.draining) {
    state.restarted = false;
    banner("");
  }
  state.started = started;
  $("board").hidden = false;
  render(data);
}

// --- drawing -------------------------------------------------------------------------------

function render(data) {
  const { status, now } = data;
  const life = status.draining ? "draining" : status.ready ? "ready" : "starting";
  $("summary").textContent = `v${status.version} · up ${duration(status.uptime_s)} · ${life}`;
  channels(status.channels, now);
  fleet(status, now);
  sessions(status.sessions);
  memory(status.memory);
  turns(data.stats);
  dlq(data.dlq.entries, now);
  jobs(status.jobs || [], now);
  spend(data.usage || { rows: [], agent_days: [] });
  chats(status.chats || { paused: [], recent: [] }, now);
  pairing(data.pairing, now);
  whyChannels(status.channels);
  privacy(data.privacy || { records: [] }, now);
}

function rows(table, items, draw, empty) {
  const body = $(table).tBodies[0];
  const cols = $(table).tHead.rows[0].cells.length;
  body.replaceChildren(
    ...(items.length ? items.map(draw) : [h("tr", {}, h("td", { class: "empty", colspan: cols }, empty))]),
  );
}

function channels(list, now) {
  rows("channels", list, (c) => {
    const retry = c.next_retry_at ? `in ${duration(c.next_retry_at - now)}` : "";
    // not configured: a restart cannot help until its settings are given (the hint says which)
    const restartable = ["parked", "backoff", "stopped"].includes(c.state);
    return h("tr", { "data-channel": c.name },
      h("td", {}, c.name, " ", h("span", { class: "muted" }, c.platform)),
      h("td", {}, h("span", { class: `badge ${c.state}` }, c.state.replace("_", " "))),
      h("td", { class: "nowrap" }, `${duration(now - c.since)} ago`),
      h("td", { class: "error" }, c.error || ""),
      h("td", { class: "hint" }, c.hint || ""),
      h("td", {}, `${c.restarts_last_hour ?? 0} / ${c.restart_budget ?? "–"}`,
        h("span", { class: "muted" }, ` (${c.restarts} total)`)),
      h("td", {}, retry),
      h("td", {}, restartable ? h("button", { onclick: () => restart(c.name) }, "Restart") : ""),
    );
  }, "no channels configured");
}

function fleet(status, now) {
  const b = status.breaker;
  $("breaker").replaceChildren(
    b.tripped
      ? h("p", {}, h("span", { class: "badge bad" }, "tripped"),
        ` all channel restarts on hold for ${duration((b.until || now) - now)}`)
      : h("p", {}, h("span", { class: "badge ok" }, "armed"),
        h("span", { class: "muted" }, ` trips at ${b.restarts_per_hour} restarts/hour or ${Math.round(b.failing_fraction * 100)} % of channels failing`)),
  );
  const owners = status.degraded;
  $("degraded").replaceChildren(
    ...(owners.length
      ? owners.map((o) => h("li", { "data-owner": `${o.owner_kind}:${o.owner_id}` },
        h("b", {}, `${o.owner_kind} ${o.owner_id}`), ` ${o.reason} `,
        h("span", { class: "muted" }, `(${duration(now - o.since)})`), h("div", { class: "hint" }, o.retry_hint)))
      : [h("li", { class: "muted" }, "none")]),
  );
}

function tile(value, label) {
  return h("div", { class: "tile" }, h("b", {}, String(value)), h("span", {}, label));
}

function sessions(s) {
  $("sessions").replaceChildren(
    tile(s.warm, "warm"), tile(s.active_turns, "running"), tile(s.queued, "queued"), tile(s.evictions, "evicted"),
  );
}

function mb(bytes) {
  return `${Math.round(bytes / 1048576)} MB`;
}

function memory(m) {
  if (!m.limit_bytes) {
    $("memory").replaceChildren(h("p", {}, `rss ${mb(m.rss_bytes)} `, h("span", { class: "muted" }, "(no memory limit known)")));
    return;
  }
  const ratio = m.ratio ?? m.rss_bytes / m.limit_bytes;
  const fill = h("div", { class: `fill ${ratio >= m.shed_ratio ? "shed" : ratio >= m.evict_ratio ? "evict" : ""}` });
  fill.style.width = `${Math.min(100, ratio * 100)}%`;
  const evict = h("div", { class: "mark", title: `evict idle sessions above ${Math.round(m.evict_ratio * 100)} %` });
  evict.style.left = `${m.evict_ratio * 100}%`;
  const shed = h("div", { class: "mark", title: `refuse new turns above ${Math.round(m.shed_ratio * 100)} %` });
  shed.style.left = `${m.shed_ratio * 100}%`;
  $("memory").replaceChildren(
    h("div", { class: "bar" }, fill, evict, shed),
    h("p", {}, `${mb(m.rss_bytes)} of ${mb(m.limit_bytes)} (${Math.round(ratio * 100)} %)`,
      m.shedding ? h("span", { class: "badge bad" }, " shedding") : "",
      h("span", { class: "muted" }, ` · evict at ${Math.round(m.evict_ratio * 100)} %, shed at ${Math.round(m.shed_ratio * 100)} %`)),
  );
}

function turns(stats) {
  const reasons = Object.keys(stats.reasons);
  $("turns-total").textContent = `(${stats.turns} in the last ${stats.window_minutes} min)`;
  $("turns-chart").replaceChildren(turnsChart(stats.minutes, reasons));
  $("turns-legend").replaceChildren(
    ...reasons.map((r) => {
      const swatch = h("i");
      swatch.style.background = colorOf(r);
      return h("span", { "data-reason": r }, swatch, `${r} ${stats.reasons[r]}`);
    }),
  );
  $("latency-total").textContent = `(p50 ${ms(stats.p50_s)}, p99 ${ms(stats.p99_s)}; blue p50, red p99)`;
  $("latency-chart").replaceChildren(latencyChart(stats.minutes));
}

function dlq(entries, now) {
  rows("dlq", entries, (e) => h("tr", { "data-dlq": e.id },
    h("td", {}, `#${e.id}`),
    h("td", { class: "nowrap" }, `${duration(now - e.created_at)} ago`),
    h("td", {}, e.target),
    h("td", { class: "error" }, `${e.kind}${e.error ? `: ${e.error}` : ""}`),
    h("td", {}, e.preview),
    h("td", {},
      h("button", { class: "primary", onclick: () => act("POST", `/api/dlq/${e.id}/replay`, null, (d) => `reply #${e.id}: ${d.status || d.error}`) }, "Replay"), " ",
      h("button", { class: "danger", onclick: () => act("DELETE", `/api/dlq/${e.id}`, null, () => `reply #${e.id} dropped`) }, "Drop")),
  ), "nothing undelivered");
}

function usd(x) {
  // enough digits that a small amount never reads as 0.00
  if (x === 0) return "$0";
  return x >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(Math.min(9, Math.max(2, 1 - Math.floor(Math.log10(x)))))}`;
}

function spend(usage) {
  const top = usage.rows.slice(0, 10);
  rows("spenders", top, (r) => h("tr", {},
    h("td", {}, r.rule || r.scope || ""),
    h("td", {}, r.id),
    h("td", { class: "nowrap" }, r.period_start),
    h("td", {}, usd(r.usd)),
    h("td", {}, String(r.tokens)),
    h("td", {}, String(r.turns)),
  ), "no budget counters (budgets: in gateway.yaml)");
  rows("agent-days", usage.agent_days, (d) => h("tr", {},
    h("td", { class: "nowrap" }, d.day),
    h("td", {}, d.agent),
    h("td", {}, usd(d.usd)),
    h("td", {}, String(d.tokens)),
    h("td", {}, String(d.turns)),
  ), "no spend recorded yet");
}

function jobs(list, now) {
  const when = (t) => (t === null ? "-" : t >= now ? `in ${duration(t - now)}` : `${duration(now - t)} ago`);
  const last = (l) => (l ? `${when(l.instant)}: ${l.reason}${l.count > 1 ? ` ×${l.count}` : ""} → ${(l.runs || []).map((r) => r.outcome).join(", ") || "-"}` : "never ran");
  rows("jobs", list, (j) => h("tr", { "data-job": j.id },
    h("td", {}, j.id, " ", h("span", { class: j.state === "active" ? "badge" : "badge bad" }, j.state)),
    h("td", {}, j.schedule),
    h("td", {}, j.deliver.join(", ")),
    h("td", { class: "nowrap" }, when(j.next_at)),
    h("td", { class: j.problems.length ? "error" : "" }, last(j.last), ...j.problems.map((p) => h("div", {}, p))),
    h("td", {},
      h("button", { class: "primary", onclick: () => act("POST", `/api/jobs/${encodeURIComponent(j.id)}/run`, null, () => `job ${j.id} ran`) }, "Run now"), " ",
      h("button", { onclick: () => act("POST", `/api/jobs/${encodeURIComponent(j.id)}/${j.state === "paused" ? "resume" : "pause"}`, null, () => `job ${j.id} ${j.state === "paused" ? "resumed" : "paused"}`) }, j.state === "paused" ? "Resume" : "Pause")),
  ), "no jobs (schedules: in gateway.yaml, or chatgate jobs add)");
}

// A human takes over a chat: its reply boxes persist across snapshots (typing is never lost).
const pausedCards = new Map();

function chats(c, now) {
  const paused = new Map(c.paused.map((p) => [p.chat, p]));
  const listed = [...c.recent];
  for (const p of c.paused) {
    if (!listed.some((r) => r.chat === p.chat)) listed.unshift({ chat: p.chat, address: p.chat, updated_at: null });
  }
  rows("chats", listed, (r) => {
    const p = paused.get(r.chat);
    const until = p ? (p.until ? ` until in ${duration(p.until - now)}` : " until resumed") : "";
    return h("tr", { "data-chat": r.address },
      h("td", {}, r.address),
      h("td", {}, p ? h("span", { class: "badge warn" }, "paused") : h("span", { class: "badge ok" }, "bot answers"),
        p ? h("span", { class: "muted" }, `${until} (by ${p.by})`) : ""),
      h("td", { class: "nowrap" }, r.updated_at ? `${duration(now - r.updated_at)} ago` : "-"),
      h("td", {}, p
        ? h("button", { class: "primary", onclick: () => act("POST", "/api/chats/resume", { chat: r.chat, by: "dashboard" }, (d) => (d.resumed ? `${r.chat} resumed` : `${r.chat} was not paused`)) }, "Resume")
        : h("button", { onclick: () => act("POST", "/api/chats/pause", { chat: r.chat, by: "dashboard" }, (d) => (d.paused ? `${r.chat} paused` : `not paused: ${d.error}`)) }, "Pause")),
    );
  }, "no conversations yet");
  for (const [chat, card] of pausedCards) {
    if (!paused.has(chat)) {
      card.el.remove();
      pausedCards.delete(chat);
    }
  }
  for (const p of c.paused) {
    let card = pausedCards.get(p.chat);
    if (!card) {
      card = pausedCard(p.chat);
      pausedCards.set(p.chat, card);
      $("paused").append(card.el);
    }
    card.tail.replaceChildren(
      ...(p.tail.length ? p.tail.map((line) => h("li", { class: line.human ? "human" : line.role },
        line.human ? h("span", { class: "badge warn" }, `human · ${line.human}`) : h("b", {}, line.role), " ", line.content))
        : [h("li", { class: "muted" }, "nothing said yet")]),
    );
  }
}

function pausedCard(chat) {
  const input = h("textarea", { rows: "2", "aria-label": `reply in ${chat}`, placeholder: "Reply as the bot…" });
  const form = h("form", { class: "reply" }, input, h("button", { type: "submit", class: "primary" }, "Send"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    act("POST", "/api/chats/reply", { chat, text, by: "dashboard" }, (d) => {
      if (d.delivered) input.value = "";
      return d.delivered ? `sent to ${chat} as the bot` : `not sent: ${d.error || d.reason_code}`;
    });
  });
  const tail = h("ul", { class: "plain transcript" });
  const el = h("div", { class: "paused-chat", "data-paused": chat }, h("h3", {}, `${chat} — a human answers here`), tail, form);
  return { el, tail };
}

function pairing(p, now) {
  rows("pairing", p.pending, (r) => h("tr", { "data-code": r.code },
    h("td", {}, r.channel),
    h("td", {}, r.sender_name || r.sender_id),
    h("td", {}, h("code", {}, r.code)),
    h("td", {}, `${duration(now - r.issued_at)} ago`),
    h("td", {},
      h("button", { class: "primary", onclick: () => act("POST", "/api/pairing/approve", { channel: r.channel, code: r.code }, (d) => (d.approved ? `${r.sender_name || r.sender_id} approved` : `not approved: ${d.outcome}`)) }, "Approve"), " ",
      h("button", { class: "danger", onclick: () => act("POST", "/api/pairing/deny", { channel: r.channel, code: r.code }, () => "request denied") }, "Deny")),
  ), "no one is waiting");
  $("approved").textContent = `${p.approved.length} approved user(s)`;
}

function whyChannels(list) {
  const select = $("why-channel");
  const names = list.map((c) => c.name);
  if (select.options.length === names.length && [...select.options].every((o, i) => o.value === names[i])) return;
  const chosen = select.value;
  select.replaceChildren(...names.map((n) => new Option(n, n)));
  if (names.includes(chosen)) select.value = chosen;
}

// --- actions (every one carries the token; a 401 signs the page out) -----------------------

async function act(method, path, body, describe) {
  const headers = body ? { ...auth(), "Content-Type": "application/json" } : auth();
  let response;
  try {
    response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  } catch {
    return toast("the gateway did not answer");
  }
  if (response.status === 401) return signOut("That token was refused.");
  if (response.ok && response.headers.get("Content-Type") === "application/gzip") {
    return describe({ blob: await response.blob() }, person);
  }
  const data = await response.json().catch(() => ({}));
  toast(describe(data, response));
  connect(); // a fresh snapshot now rather than at the next tick
}

function restart(name) {
  act("POST", `/api/channels/${encodeURIComponent(name)}/restart`, null, (d) => (d.ok ? `${name}: restart requested` : `${name}: not found`));
}

$("why").addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = new URLSearchParams({ channel: $("why-channel").value });
  if ($("why-id").value.trim()) query.set("message_id", $("why-id").value.trim());
  else if ($("why-user").value.trim()) query.set("user", $("why-user").value.trim());
  const response = await fetch(`/api/why?${query}`, { headers: auth() });
  if (response.status === 401) return signOut("That token was refused.");
  const data = await response.json();
  $("why-result").replaceChildren(
    ...(data.trails?.length
      ? data.trails.map((t) => h("li", { "data-key": t.key }, h("b", {}, t.summary), h("div", { class: "muted" }, t.key)))
      : [h("li", { class: "muted" }, "no such message in the journal")]),
  );
});

// --- privacy requests (show, export, erase one person; the audit trail) ----------------------

function privacy(audit, now) {
  rows("privacy", audit.records, (r) => h("tr", {},
    h("td", {}, `${duration(now - r.at)} ago`),
    h("td", {}, r.action),
    h("td", {}, r.person),
    h("td", {}, Object.values(r.counts).reduce((a, b) => a + b, 0).toString()),
  ), "no privacy requests yet");
}

async function people(method, verb, describe) {
  const person = $("people-person").value.trim();
  if (!person) return;
  const query = method === "GET" ? `?${new URLSearchParams({ person })}` : "";
  const headers = method === "POST" ? { ...auth(), "Content-Type": "application/json" } : auth();
  const body = method === "POST" ? JSON.stringify({ person }) : undefined;
  let response;
  try {
    response = await fetch(`/api/people/${verb}${query}`, { method, headers, body });
  } catch {
    return toast("the gateway did not answer");
  }
  if (response.status === 401) return signOut("That token was refused.");
  if (response.ok && response.headers.get("Content-Type") === "application/gzip") {
    return describe({ blob: await response.blob() }, person);
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) return toast(data.error || `refused (${response.status})`);
  describe(data, person);
}

function storeCounts(stores) {
  return Object.entries(stores).map(([name, s]) => h("li", { "data-store": name }, `${name}: ${s.count}`));
}

$("people").addEventListener("submit", (event) => {
  event.preventDefault();
  people("GET", "show", (d) => $("people-result").replaceChildren(...storeCounts(d.stores)));
});
$("people-export").addEventListener("click", () => people("POST", "export", (d, person) => {
  const link = h("a", { href: URL.createObjectURL(d.blob),
    download: `chatgate-person-${person.replace(/[^A-Za-z0-9._-]/g, "_")}.tar.gz` });
  link.click();
  URL.revokeObjectURL(link.href);
  toast(`exported ${person} (${d.blob.size} bytes)`);
}));
$("people-erase").addEventListener("click", () => {
  const person = $("people-person").value.trim();
  if (!person || !confirm(`Erase everything stored about ${person}? This cannot be undone.`)) return;
  people("POST", "erase", (d) => {
    $("people-result").replaceChildren(...d.erased.map((e) => h("li", { "data-store": e.store }, `${e.store}: ${e.removed} removed`)));
    toast(`erased ${person}`);
    connect();
  });
});

$("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("token").value.trim();
  $("token").value = "";
  if (!state.token) return;
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $("signin-error").textContent = "";
  setConn("connecting", "connecting…");
  connect();
});
$("signout").addEventListener("click", () => signOut(""));

if (location.hash.startsWith("#token=")) {
  state.token = decodeURIComponent(location.hash.slice(7));
  sessionStorage.setItem(TOKEN_KEY, state.token);
  history.replaceState(null, "", location.pathname); // the link's token leaves the address bar
}
connect();
