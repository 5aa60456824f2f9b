// Small SVG charts for the dashboard: turns per minute stacked by reason code, and latency lines.
// Built with DOM calls (no inline styles or scripts), so the page's strict CSP holds.

const NS = "http://www.w3.org/2000/svg";
const W = 720;
const H = 160;
const LEFT = 40;
const BOTTOM = 18;
const TOP = 8;
const KNOWN = { text: "#2e9d5b", empty: "#9aa3ad", silence: "#c5cbd3" };
const PALETTE = ["#c63b3b", "#e08a1e", "#8e6bd1", "#3a87ad", "#b5651d", "#d94f9b", "#5b8c2a", "#607d8b"];

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, String(value));
  el.append(...children);
  return el;
}

export function colorOf(reason) {
  if (KNOWN[reason]) return KNOWN[reason];
  let hash = 0;
  for (const ch of reason) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

function clock(epochSeconds) {
  return new Date(epochSeconds * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
}

function frame(maxLabel, minutes) {
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", preserveAspectRatio: "none" });
  const bottom = H - BOTTOM;
  root.append(
    svg("line", { x1: LEFT, x2: W, y1: bottom, y2: bottom, stroke: "#dde1e7" }),
    svg("text", { x: LEFT - 4, y: TOP + 8, "text-anchor": "end" }, maxLabel),
    svg("text", { x: LEFT - 4, y: bottom, "text-anchor": "end" }, "0"),
  );
  if (minutes.length) {
    root.append(
      svg("text", { x: LEFT, y: H - 4 }, clock(minutes[0].at)),
      svg("text", { x: W, y: H - 4, "text-anchor": "end" }, clock(minutes.at(-1).at)),
    );
  }
  return root;
}

export function turnsChart(minutes, reasons) {
  const max = Math.max(1, ...minutes.map((m) => m.turns));
  const root = frame(String(max), minutes);
  const step = (W - LEFT) / Math.max(1, minutes.length);
  const scale = (H - BOTTOM - TOP) / max;
  minutes.forEach((minute, index) => {
    let y = H - BOTTOM;
    for (const reason of reasons) {
      const count = minute.reasons[reason] || 0;
      if (!count) continue;
      const height = count * scale;
      y -= height;
      const bar = svg("rect", {
        x: LEFT + index * step + 1, y, width: Math.max(1, step - 2), height, fill: colorOf(reason),
        "data-reason": reason,
      });
      bar.append(svg("title", {}, `${clock(minute.at)} ${reason}: ${count}`));
      root.append(bar);
    }
  });
  return root;
}

export function latencyChart(minutes) {
  const values = minutes.flatMap((m) => [m.p50_s, m.p99_s]).filter((v) => v !== null);
  const max = Math.max(0.001, ...values);
  const root = frame(ms(max), minutes);
  const step = (W - LEFT) / Math.max(1, minutes.length);
  const scale = (H - BOTTOM - TOP) / max;
  for (const [key, color] of [["p99_s", "#c63b3b"], ["p50_s", "#2f6fed"]]) {
    minutes.forEach((minute, index) => {
      if (minute[key] === null) return;
      const dot = svg("circle", {
        cx: LEFT + (index + 0.5) * step, cy: H - BOTTOM - minute[key] * scale, r: 3, fill: color,
        "data-series": key,
      });
      dot.append(svg("title", {}, `${clock(minute.at)} ${key.slice(0, 3)}: ${ms(minute[key])}`));
      root.append(dot);
    });
  }
  return root;
}

export function ms(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(1)} s`;
}
