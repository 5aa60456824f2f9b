// chatgate web chat: one ES module, no framework, no build step.
// Messages arrive over Server-Sent Events, each with an id and a sequence number; the page keeps
// the highest sequence number it has seen, so a reconnect (EventSource's own, with
// Last-Event-ID, or ours with ?after=) replays exactly what it missed. A message arriving again
// (an edit of a streamed draft, or a replay) replaces the one with the same id in place.

const base = document.querySelector('meta[name="chatgate-base"]').content;
const $ = (id) => document.getElementById(id);
const log = $("log");
const state = {
  csrf: "", lastSeq: 0, source: null, backoff: 0, typingTimer: 0, agents: [], maxChars: 8000,
  maxUpload: 0, files: [],
};
const AGENT_KEY = `chatgate:${base}:agent`;
const PENDING = Number.MAX_SAFE_INTEGER;

function api(path) {
  return `${base}/api/${path}`;
}

function clientId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function setConn(kind, text) {
  $("conn").dataset.state = kind;
  $("conn").textContent = text;
}

// --- signing in --------------------------------------------------------------------------

async function boot() {
  let answer;
  try {
    answer = await fetch(api("session"), { cache: "no-store" });
  } catch {
    return retryLater();
  }
  if (!answer.ok) return retryLater();
  const info = await answer.json();
  if (info.signed_in) return start(info);
  if (info.auth === "open") return signIn({});
  $("signin").hidden = false;
  $("token").focus();
}

async function signIn(body) {
  let answer;
  try {
    answer = await fetch(api("session"), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  } catch {
    return retryLater();
  }
  if (!answer.ok) {
    $("signin").hidden = false;
    $("signin-error").textContent = answer.status === 401 ? "That token is not right." : "Try again.";
    return;
  }
  $("token").value = "";
  $("signin").hidden = true;
  start(await answer.json());
}

function start(who) {
  state.csrf = who.csrf;
  state.maxChars = who.max_input_chars;
  state.agents = who.agents;
  const picker = $("agent");
  picker.replaceChildren(...who.agents.map((name) => new Option(name, name)));
  const saved = localStorage.getItem(AGENT_KEY);
  if (saved && who.agents.includes(saved)) picker.value = saved;
  $("agent-picker").hidden = who.agents.length < 2;
  for (const id of ["input", "send", "new", "stop"]) $(id).disabled = false;
  state.maxUpload = who.max_upload_bytes || 0;
  $("attach").hidden = $("attach").disabled = state.maxUpload === 0;
  connect();
  $("input").focus();
}

// --- the event stream --------------------------------------------------------------------

function connect() {
  if (state.source) state.source.close();
  const url = state.lastSeq ? api(`events?after=${state.lastSeq}`) : api("events");
  const source = new EventSource(url);
  state.source = source;
  source.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    state.lastSeq = Math.max(state.lastSeq, message.seq);
    show(message);
  });
  source.addEventListener("typing", (event) => typing(JSON.parse(event.data).ttl_s));
  source.addEventListener("ready", () => {
    state.backoff = 0;
    setConn("live", "connected");
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) {
      // an HTTP error (restarting, signed out): check the session, then connect again
      source.close();
      retryLater();
    } else {
      setConn("offline", "reconnecting…");
    }
  };
}

function retryLater() {
  setConn("offline", "reconnecting…");
  state.backoff = Math.min(state.backoff ? state.backoff * 2 : 500, 5000);
  setTimeout(boot, state.backoff);
}

function typing(ttlSeconds) {
  $("typing").hidden = false;
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(() => ($("typing").hidden = true), ttlSeconds * 1000);
}

// --- drawing messages --------------------------------------------------------------------

function show(message) {
  const current = document.getElementById(`msg-${message.id}`);
  if (current && Number(current.dataset.seq) >= message.seq) return;
  if (message.role === "assistant") $("typing").hidden = true;
  const node = draw(message);
  if (current) current.replaceWith(node);
  else insert(node);
  scrollDown();
}

function insert(node) {
  const pos = Number(node.dataset.pos);
  let after = log.lastElementChild;
  while (after && Number(after.dataset.pos) > pos) after = after.previousElementSibling;
  if (after) after.after(node);
  else log.prepend(node);
}

function scrollDown() {
  log.scrollTop = log.scrollHeight;
}

function draw(message) {
  const node = document.createElement("div");
  node.id = `msg-${message.id}`;
  node.className = `msg ${message.role}`;
  node.dataset.seq = String(message.seq);
  node.dataset.pos = String(message.pos);
  if (message.role === "user") {
    node.textContent = message.text;
    if (message.choice) node.classList.add("choice");
    if (message.message_id) node.title = `message id ${message.message_id} (for \`chatgate why\`)`;
    return node;
  }
  for (const block of message.blocks || []) node.append(drawBlock(block, node));
  return node;
}

function drawBlock(block, bubble) {
  const el = document.createElement("div");
  if (block.type === "text" || block.type === "context") {
    el.className = block.type;
    el.append(safeHtml(block.html));
  } else if (block.type === "buttons") {
    el.className = "buttons";
    for (const b of block.buttons) el.append(button(b, el));
  } else if (block.type === "select") {
    el.append(choose(block));
  } else if (block.type === "table") {
    el.append(table(block));
  } else if (block.type === "divider") {
    el.append(document.createElement("hr"));
  } else if (block.type === "file") {
    el.append(fileBlock(block));
  }
  return el;
}

function fileBlock(spec) {
  const box = document.createElement("figure");
  box.className = "file";
  const link = document.createElement("a");
  link.href = spec.url;
  link.download = spec.name;
  link.rel = "noopener noreferrer";
  if (spec.preview) {
    const img = document.createElement("img");
    img.src = spec.url;
    img.alt = spec.caption || spec.name;
    link.append(img);
  } else {
    link.textContent = `📎 ${spec.name} (${spec.size})`;
  }
  box.append(link);
  if (spec.caption) {
    const caption = document.createElement("figcaption");
    caption.textContent = spec.caption;
    box.append(caption);
  }
  return box;
}

function button(spec, group) {
  if (spec.url) {
    const link = document.createElement("a");
    link.href = spec.url;
    link.target = "_blank";
    link.rel = "noopener noreferrer";
    link.textContent = spec.label;
    return link;
  }
  const el = document.createElement("button");
  el.type = "button";
  el.textContent = spec.label;
  if (spec.style !== "default") el.classList.add(spec.style);
  el.addEventListener("click", () => {
    for (const other of group.querySelectorAll("button")) other.disabled = true;
    el.classList.add("chosen");
    send({ choice: spec.value, label: spec.label });
  });
  return el;
}

function choose(block) {
  const form = document.createElement("form");
  form.className = "choose";
  const select = document.createElement("select");
  select.append(new Option(block.placeholder, ""), ...block.options.map((o) => new Option(o.label, o.value)));
  const go = document.createElement("button");
  go.textContent = "Choose";
  form.append(select, go);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!select.value) return;
    select.disabled = go.disabled = true;
    send({ choice: select.value, label: select.selectedOptions[0].textContent });
  });
  return form;
}

function table(block) {
  const el = document.createElement("table");
  const head = el.createTHead().insertRow();
  for (const name of block.columns) head.append(Object.assign(document.createElement("th"), { textContent: name }));
  const body = el.createTBody();
  for (const row of block.rows) {
    const tr = body.insertRow();
    for (const cell of row) tr.insertCell().textContent = cell;
  }
  return el;
}

// The server sends a small HTML subset; only these elements and attributes reach the DOM.
const ALLOWED = new Set(["B", "I", "S", "CODE", "PRE", "A"]);
const DROPPED = new Set(["SCRIPT", "STYLE", "TEMPLATE", "IFRAME", "OBJECT"]);

function safeHtml(html) {
  const parsed = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  const out = document.createDocumentFragment();
  copySafe(parsed.body, out);
  return out;
}

function copySafe(from, to) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      to.append(node.data);
    } else if (node.nodeType === Node.ELEMENT_NODE && !DROPPED.has(node.tagName)) {
      if (!ALLOWED.has(node.tagName)) {
        copySafe(node, to);
        continue;
      }
      const el = document.createElement(node.tagName.toLowerCase());
      if (node.tagName === "A") {
        const href = node.getAttribute("href") || "";
        if (!/^(https?:|mailto:)/i.test(href)) {
          copySafe(node, to);
          continue;
        }
        el.href = href;
        el.target = "_blank";
        el.rel = "noopener noreferrer";
      }
      const cls = node.getAttribute("class") || "";
      if (node.tagName === "CODE" && /^language-[\w+#.-]+$/.test(cls)) el.className = cls;
      copySafe(node, el);
      to.append(el);
    }
  }
}

// --- sending ---------------------------------------------------------------------------

async function send(fields) {
  const id = clientId();
  const body = { client_id: id, agent: $("agent").value, ...fields };
  const local = draw({
    id: `u-${id}`, role: "user", seq: 0, pos: PENDING, text: fields.label ?? fields.text,
    choice: "choice" in fields,
  });
  local.classList.add("pending");
  insert(local);
  scrollDown();
  for (let attempt = 0, wait = 400; attempt < 8; attempt += 1, wait = Math.min(wait * 2, 5000)) {
    let answer = null;
    try {
      answer = await fetch(api("send"), {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
        body: JSON.stringify(body),
      });
    } catch {
      answer = null; // offline or the gateway is restarting: the same client_id is safe to resend
    }
    if (answer && answer.status === 202) return;
    if (answer && answer.status !== 503 && answer.status !== 502) {
      const problem = await answer.json().catch(() => ({}));
      markFailed(id, problem.error || `error ${answer.status}`);
      if (answer.status === 401) boot();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  markFailed(id, "not sent: the gateway is unreachable");
}

function markFailed(id, why) {
  const node = document.getElementById(`msg-u-${id}`);
  if (!node) return;
  node.classList.add("failed");
  node.title = why;
}

// --- attaching files: uploaded at once, sent by id with the next message -----------------

function drawAttached() {
  const chips = state.files.map((file) => {
    const chip = document.createElement("span");
    chip.className = `chip ${file.status}`;
    chip.textContent = `📎 ${file.name}`;
    if (file.error) chip.title = file.error;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "×";
    remove.title = "remove";
    remove.addEventListener("click", () => {
      state.files = state.files.filter((f) => f !== file);
      drawAttached();
    });
    chip.append(remove);
    return chip;
  });
  $("attached").replaceChildren(...chips);
  $("attached").hidden = chips.length === 0;
}

async function attach(files) {
  if (state.maxUpload === 0) return;
  await Promise.all(Array.from(files, async (picked) => {
    const file = { name: picked.name, status: "uploading", id: null, error: "" };
    state.files.push(file);
    drawAttached();
    if (picked.size > state.maxUpload) {
      Object.assign(file, { status: "failed", error: `larger than ${state.maxUpload} bytes` });
      drawAttached();
      return;
    }
    const form = new FormData();
    form.append("file", picked, picked.name);
    try {
      const answer = await fetch(api("upload"), {
        method: "POST", headers: { "X-CSRF-Token": state.csrf }, body: form,
      });
      const body = await answer.json().catch(() => ({}));
      if (answer.status === 201) Object.assign(file, { status: "ready", id: body.upload_id });
      else Object.assign(file, { status: "failed", error: body.error || `error ${answer.status}` });
    } catch {
      Object.assign(file, { status: "failed", error: "not uploaded: the gateway is unreachable" });
    }
    drawAttached();
  }));
}

$("attach").addEventListener("click", () => $("file").click());
$("file").addEventListener("change", () => {
  attach($("file").files);
  $("file").value = "";
});
document.addEventListener("dragover", (event) => {
  if (state.maxUpload === 0 || !event.dataTransfer.types.includes("Files")) return;
  event.preventDefault();
  document.body.classList.add("dropping");
});
document.addEventListener("dragleave", () => document.body.classList.remove("dropping"));
document.addEventListener("drop", (event) => {
  document.body.classList.remove("dropping");
  if (state.maxUpload === 0 || !event.dataTransfer.files.length) return;
  event.preventDefault();
  attach(event.dataTransfer.files);
});

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("input").value;
  const ready = state.files.filter((file) => file.status === "ready");
  if (state.files.some((file) => file.status === "uploading")) return;
  if (!text.trim() && ready.length === 0) return;
  if (text.length > state.maxChars) {
    $("input").setCustomValidity(`at most ${state.maxChars} characters`);
    $("input").reportValidity();
    return;
  }
  $("input").value = "";
  state.files = [];
  drawAttached();
  if (ready.length === 0) {
    send({ text });
    return;
  }
  const shown = [text, ...ready.map((file) => `📎 ${file.name}`)].join("\n").trim();
  send({ text, attachments: ready.map((file) => file.id), label: shown });
});
$("input").addEventListener("input", () => $("input").setCustomValidity(""));
$("input").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
$("new").addEventListener("click", () => send({ text: "/new" }));
$("stop").addEventListener("click", () => send({ text: "/stop" }));
$("agent").addEventListener("change", () => localStorage.setItem(AGENT_KEY, $("agent").value));
$("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  signIn({ token: $("token").value });
});

boot();
