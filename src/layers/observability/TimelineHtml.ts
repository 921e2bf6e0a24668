/**
 * The timeline page: a self-contained HTML document (inline style and script, no network resource) drawing each
 * section of `TimelineData` as rows of bars over time — queued, executing, completed (waiting for its turn to be
 * yielded) — coloured by outcome, with the model's stream as its own row. Hovering a bar shows a summary; clicking
 * a row opens its input, decision trace and result. Pure: returns the text of the page.
 */
import type { Row, Section } from "./TimelineData.js"

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const style = `
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222;background:#fff}
h1{font-size:18px}h2{font-size:15px;margin:18px 0 6px}
.legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
.row{display:flex;align-items:center;height:22px;cursor:pointer;border-bottom:1px solid #eee}
.row:hover{background:#f6f8fa}
.label{width:260px;flex:none;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font-family:ui-monospace,monospace}
.track{position:relative;flex:1;height:14px}
.bar{position:absolute;top:0;height:14px;min-width:2px}
.queued{background:#d0d7de}.waiting{background:repeating-linear-gradient(45deg,#ddd 0 3px,#fff 3px 6px)}
.ok{background:#2da44e}.error{background:#cf222e}.denied{background:#bc4c00}.cancelled{background:#8250df}
.interrupted{background:#d4a72c}.pending{background:#57606a}.model{background:#0969da}
.details{display:none;margin:4px 0 10px 260px;padding:8px;background:#f6f8fa;border:1px solid #d0d7de;white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px}
.details.open{display:block}.axis{margin-left:260px;color:#57606a;font-size:11px;display:flex;justify-content:space-between}
`

const script = `
document.querySelectorAll(".row").forEach(function (row) {
  row.addEventListener("click", function () {
    var details = row.nextElementSibling
    if (details && details.classList.contains("details")) details.classList.toggle("open")
  })
})
`

const kinds = ["ok", "error", "denied", "cancelled", "interrupted"] as const

const bar = (cls: string, from: number, to: number, t0: number, span: number, title: string): string => {
  const left = ((from - t0) / span) * 100
  const width = Math.max(((to - from) / span) * 100, 0)
  return `<div class="bar ${cls}" style="left:${left.toFixed(3)}%;width:${width.toFixed(3)}%" title="${escapeHtml(title)}"></div>`
}

const ms = (from: number | undefined, to: number | undefined) =>
  from === undefined || to === undefined ? "-" : `${Math.round(to - from)} ms`

const decisionText = (row: Row): string => {
  const d = row.decision
  if (d === undefined) return "decision: (not recorded)"
  const steps = d.trace.map((s) => `  ${s.step}: ${s.outcome} — ${s.reason}${s.rule ? ` [${s.rule}]` : ""}`)
  const rule = d.rule === null ? "" : ` rule ${d.rule}${d.source === null ? "" : ` (${d.source})`}`
  return [`decision: ${d.behavior}${rule} — ${d.reason}`, ...steps].join("\n")
}

const callRow = (row: Row, t0: number, span: number): string => {
  const bars: Array<string> = []
  const policy =
    row.policy === undefined ? "" : `, ${row.policy.length} policy event${row.policy.length === 1 ? "" : "s"}`
  const summary = `${row.id} ${row.name}: ${row.kind}, queued ${ms(row.queued, row.executing)}, executing ${ms(row.executing, row.completed)}${policy}`
  if (row.queued !== undefined) {
    const end = row.executing ?? row.completed ?? row.queued
    bars.push(bar("queued", row.queued, end, t0, span, `${summary} (queued)`))
  }
  if (row.executing !== undefined && row.completed !== undefined) {
    bars.push(bar(row.kind, row.executing, row.completed, t0, span, `${summary} (executing)`))
  } else if (row.completed !== undefined) {
    bars.push(bar(row.kind, row.completed, row.completed, t0, span, `${summary} (completed without running)`))
  }
  if (row.completed !== undefined && row.yielded !== undefined) {
    bars.push(bar("waiting", row.completed, row.yielded, t0, span, `${summary} (completed, waiting to be yielded)`))
  }
  const policyLines = row.policy === undefined ? [] : row.policy.map((line) => `policy: ${line}`)
  const details = [`input: ${row.input}`, decisionText(row), ...policyLines, `result (${row.kind}):`, row.result].join(
    "\n"
  )
  // a sub-agent's call sits under its Agent call, indented by depth
  const indent = (row.depth ?? 0) > 0 ? ` style="padding-left:${(row.depth ?? 0) * 16}px"` : ""
  return (
    `<div class="row call ${row.kind}-row" data-id="${escapeHtml(row.id)}" title="${escapeHtml(summary)}">` +
    `<div class="label"${indent}>${(row.depth ?? 0) > 0 ? "↳ " : ""}${escapeHtml(row.id)} ${escapeHtml(row.name)}</div><div class="track">${bars.join("")}</div></div>` +
    `<div class="details">${escapeHtml(details)}</div>`
  )
}

const section = (s: Section): string => {
  const times = s.rows.flatMap((r) => [r.queued, r.executing, r.completed, r.yielded])
  if (s.model !== undefined) times.push(s.model.start, s.model.end)
  const known = times.filter((t): t is number => t !== undefined)
  const t0 = known.length === 0 ? 0 : Math.min(...known)
  const t1 = known.length === 0 ? 1 : Math.max(...known)
  const span = Math.max(t1 - t0, 1)
  const model =
    s.model === undefined
      ? ""
      : `<div class="row model-row"><div class="label">model stream</div><div class="track">${bar("model", s.model.start, s.model.end ?? t1, t0, span, `model stream ${ms(s.model.start, s.model.end)}`)}</div></div>` +
        `<div class="details">${escapeHtml(s.text === "" ? "(no text)" : s.text)}</div>`
  return (
    `<section><h2>${escapeHtml(s.title)} — ${s.rows.length} call${s.rows.length === 1 ? "" : "s"}, ${Math.round(t1 - t0)} ms</h2>` +
    `<div class="axis"><span>0 ms</span><span>${Math.round(span / 2)} ms</span><span>${Math.round(span)} ms</span></div>` +
    model +
    s.rows.map((r) => callRow(r, t0, span)).join("") +
    `</section>`
  )
}

/** The page for `sections`, titled `title`. */
export const render = (sections: ReadonlyArray<Section>, title: string): string =>
  [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${style}</style></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`,
    '<div class="legend">',
    '<span><i class="queued"></i>queued</span>',
    ...kinds.map((k) => `<span><i class="${k}"></i>${k}</span>`),
    '<span><i class="waiting"></i>completed, not yet yielded</span><span><i class="model"></i>model stream</span>',
    "</div>",
    sections.length === 0 ? "<p>No calls recorded.</p>" : sections.map(section).join(""),
    `<script>${script}</script>`,
    "</body></html>"
  ].join("\n")
