// chatgate Config page: one ES module, no framework. The API token is the dashboard's (kept in
// sessionStorage, sent only in the Authorization header, never a cookie). The editor's text is
// checked by the daemon's own loader as one types; Apply sends the tag of the file it was read
// at, so a file changed meanwhile is refused instead of overwritten.

const TOKEN_KEY = "chatgate:dashboard:token";
const CHECK_AFTER_MS = 400;
const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem(TOKEN_KEY) || "", etag: "", text: "", writable: false, ok: false, seq: 0, timer: null };

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") el.className = value;
    else if (value !== null && value !== undefined && value !== false) el.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) el.append(child);
  }
  return el;
}

const auth = () => ({ Authorization: `Bearer ${state.token}` });

function toast(text) {
  $("toast").textContent = text;
  $("toast").hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => ($("toast").hidden = true), 5000);
}

function when(epoch) {
  return new Date(epoch * 1000).toLocaleString();
}

function signOut(why) {
  state.token = "";
  sessionStorage.removeItem(TOKEN_KEY);
  $("board").hidden = true;
  $("signout").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = why || "";
  $("conn").dataset.state = "offline";
  $("conn").textContent = "signed out";
}

async function call(method, path, body) {
  const headers = body ? { ...auth(), "Content-Type": "application/json" } : auth();
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined, cache: "no-store" });
  if (response.status === 401) {
    signOut("That token was refused.");
    throw new Error("signed out");
  }
  return { status: response.status, data: await response.json().catch(() => ({})) };
}

// --- loading -------------------------------------------------------------------------------

async function load() {
  if (!state.token) return signOut("");
  let answer;
  try {
    answer = await call("GET", "/api/config");
  } catch {
    return;
  }
  const view = answer.data;
  if (answer.status !== 200) return toast(view.error || `the gateway answered ${answer.status}`);
  $("signin").hidden = true;
  $("signout").hidden = false;
  $("board").hidden = false;
  $("conn").dataset.state = "live";
  $("conn").textContent = "signed in";
  state.etag = view.etag;
  state.text = view.text;
  state.writable = view.writable;
  $("file").textContent = view.path;
  $("etag").textContent = `tag ${view.etag.slice(0, 12)}`;
  $("editor").value = view.text;
  refusal(view.refusal);
  keys(view.keys);
  history(view.history);
  showDiff("");
  $("issues").replaceChildren();
  validity("unchanged", "the file as it is on disk");
  $("apply").disabled = true;
}

function refusal(r) {
  $("refusal").hidden = !r;
  if (!r) return;
  $("refusal").replaceChildren(h("b", {}, r.error), r.hint ? h("div", { class: "hint" }, r.hint) : "");
  $("refusal").dataset.reason = r.reason_code || "";
}

function keys(rows) {
  const filter = $("filter").value.trim().toLowerCase();
  const shown = rows.filter((r) => !filter || r.key.toLowerCase().includes(filter));
  $("keys").querySelector("tbody").replaceChildren(
    ...shown.map((r) => h("tr", { "data-key": r.key }, h("td", {}, r.key), h("td", {}, JSON.stringify(r.value)), h("td", { class: "muted" }, r.source))),
  );
  keys.rows = rows;
}

function history(changes) {
  const body = $("history").querySelector("tbody");
  if (!changes.length) return body.replaceChildren(h("tr", {}, h("td", { class: "empty", colspan: "7" }, "no changes made from here yet")));
  body.replaceChildren(
    ...changes.map((c) =>
      h("tr", { "data-id": String(c.id), "data-refused": c.refused || "" },
        h("td", { class: "nowrap" }, when(c.at)),
        h("td", {}, c.refused ? `${c.action} (refused)` : c.action),
        h("td", {}, `${c.by} · ${c.address}`),
        h("td", {}, c.changed.join(", ")),
        h("td", { class: "nowrap" }, c.refused ? "" : `+${c.added_lines} −${c.removed_lines}`),
        h("td", {}, c.refused ? `refused: ${c.refused}` : reloadText(c.reload)),
        h("td", {}, c.backup),
      ),
    ),
  );
}

function reloadText(report) {
  if (!report || !Object.keys(report).length) return "";
  if (report.ok === false) return `refused: ${report.error}`;
  if (report.unchanged) return "nothing to reload";
  if (report.not_running) return "chatgate was not running; read when it starts";
  const parts = [];
  if (report.restarted_channels?.length) parts.push(`restarted ${report.restarted_channels.join(", ")}`);
  if (report.reconfigured_channels?.length) parts.push(`reconfigured ${report.reconfigured_channels.join(", ")}`);
  if (report.needs_process_restart?.length) parts.push(`needs a process restart: ${report.needs_process_restart.join(", ")}`);
  return parts.length ? parts.join("; ") : "applied live";
}

// --- checking as one types ----------------------------------------------------------------

function validity(kind, text) {
  $("validity").dataset.state = kind;
  $("validity").textContent = text;
}

function showDiff(text) {
  $("diff").replaceChildren(
    ...text.split("\n").map((line) => h("div", { class: line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "" }, line)),
  );
}

function issues(list) {
  $("issues").replaceChildren(...list.map((i) => h("li", { "data-key": i.key, "data-line": String(i.line ?? "") }, i.text)));
}

async function check() {
  const text = $("editor").value;
  if (text === state.text) {
    issues([]);
    showDiff("");
    $("apply").disabled = true;
    return validity("unchanged", "the file as it is on disk");
  }
  const seq = ++state.seq;
  validity("checking", "checking…");
  let answer;
  try {
    answer = await call("POST", "/api/config/check", { text });
  } catch {
    return;
  }
  if (seq !== state.seq) return; // a newer text is being checked
  const d = answer.data;
  state.ok = answer.status === 200 && d.ok;
  if (state.ok) {
    issues([]);
    showDiff(d.diff);
    const warned = d.warnings?.length ? ` (${d.warnings.length} warning${d.warnings.length > 1 ? "s" : ""})` : "";
    validity("ok", `valid: ${d.changed.length} key${d.changed.length === 1 ? "" : "s"} changed${warned}`);
  } else {
    issues(d.issues?.length ? d.issues : [{ key: "", line: null, text: d.error || "not valid" }]);
    validity("bad", d.reason_code === "config_clear_secret" ? "refused: a secret in clear" : "not valid");
  }
  $("apply").disabled = !(state.ok && state.writable);
}

$("editor").addEventListener("input", () => {
  clearTimeout(state.timer);
  $("apply").disabled = true;
  state.timer = setTimeout(check, CHECK_AFTER_MS);
});

$("apply").addEventListener("click", async () => {
  $("apply").disabled = true;
  let answer;
  try {
    answer = await call("POST", "/api/config/apply", { text: $("editor").value, etag: state.etag, by: "dashboard" });
  } catch {
    return;
  }
  const d = answer.data;
  if (answer.status !== 200 || !d.ok) {
    refusal(d);
    if (d.issues?.length) issues(d.issues);
    return toast(`not applied: ${d.error}`);
  }
  await load();
  $("report").hidden = false;
  $("report").textContent = d.unchanged ? "Nothing changed." : `Applied; previous version kept as ${d.backup}. Reload: ${reloadText(d.reload)}.`;
  toast(d.unchanged ? "nothing to apply" : "applied and reloaded");
});

$("revert").addEventListener("click", () => {
  $("editor").value = state.text;
  check();
});
$("filter").addEventListener("input", () => keys(keys.rows || []));

$("signin").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("token").value.trim();
  $("token").value = "";
  if (!state.token) return;
  sessionStorage.setItem(TOKEN_KEY, state.token);
  $("signin-error").textContent = "";
  load();
});
$("signout").addEventListener("click", () => signOut(""));

load();
