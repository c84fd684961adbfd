// Progressive enhancement only: every page works without this file.
// - The paste box asks POST /api/match and lists the matches in place (the form still posts to
//   /match without JavaScript).
// - The version switch on an entry page swaps the entry in place (no full page load).
// - On the static export, the search box filters search-index.json in the browser.
// Untrusted text is only ever set with textContent, never parsed as HTML.
"use strict";

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function hitItem(href, title, metaParts) {
  const li = el("li", { class: "hit" });
  const h = el("h3", { class: "hit-title" });
  h.appendChild(el("a", { href: href }, title));
  li.appendChild(h);
  const meta = el("p", { class: "hit-meta" });
  for (const part of metaParts) if (part) meta.appendChild(el("span", {}, part));
  li.appendChild(meta);
  return li;
}

function enhancePasteBox() {
  const form = document.getElementById("paste-form");
  const out = document.getElementById("match-results");
  if (!form || !out || !window.fetch) return;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = form.querySelector("textarea").value;
    out.replaceChildren(el("p", { class: "counts" }, "Matching…"));
    let data;
    try {
      const resp = await fetch(form.getAttribute("data-api") || "/api/match", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ text: text }),
      });
      data = await resp.json();
      if (!resp.ok) throw new Error(data.detail || resp.statusText);
    } catch (err) {
      out.replaceChildren(el("p", { class: "notice" }, "Matching failed: " + err.message));
      return;
    }
    const matches = data.matches || [];
    const heading = el("h3", { id: "match-heading" },
      matches.length + (matches.length === 1 ? " match" : " matches"));
    const list = el("ol", { class: "hits", id: "match-list", "aria-labelledby": "match-heading" });
    for (const m of matches) {
      const strength = m.score >= 0.8 ? "strong match" : m.score >= 0.5 ? "possible match" : "weak guess";
      const site = m.site ? "raised at " + m.site.path + ":" + m.site.line : "";
      const snaps = m.snapshots && m.snapshots.length ? "consistent with " + m.snapshots.join(", ") : "";
      list.appendChild(hitItem(m.url || "/errors/" + m.id, m.title,
        ["score " + Number(m.score).toFixed(2), strength, site, snaps]));
    }
    out.replaceChildren(heading);
    if (matches.length) out.appendChild(list);
    else out.appendChild(el("p", {}, "No known error was found in that text."));
  });
}

function enhanceSnapshotSwitch() {
  const nav = document.querySelector(".snap-switch");
  if (!nav) return;
  const live = !nav.querySelector("a[href^='#'], a[href*='.html#']");
  nav.addEventListener("click", async (event) => {
    const link = event.target.closest("a[data-snapshot]");
    if (!link) return;
    const url = new URL(link.href, location.href);
    if (!live) {  // static export: every version is on the page; open the one asked for
      const group = document.getElementById(url.hash.slice(1));
      const details = group && group.querySelector("details");
      if (details) details.open = true;
      return;
    }
    event.preventDefault();
    try {
      const resp = await fetch(url.href, { headers: { Accept: "text/html" } });
      if (!resp.ok) throw new Error(resp.statusText);
      const doc = new DOMParser().parseFromString(await resp.text(), "text/html");
      // Every section can depend on the version shown (flags, wording), so swap the article.
      const fresh = doc.querySelector("article.entry");
      const old = document.querySelector("article.entry");
      if (!fresh || !old) throw new Error("unexpected page");
      old.replaceWith(document.importNode(fresh, true));
      history.pushState({}, "", url.href);
      enhanceSnapshotSwitch();
      const heading = document.getElementById("h-source");
      if (heading) heading.scrollIntoView({ block: "start" });
    } catch (err) {
      location.href = url.href;  // fall back to a normal page load
    }
  });
}

function openHashTarget() {
  if (!location.hash) return;
  const target = document.getElementById(location.hash.slice(1));
  const details = target && target.querySelector("details");
  if (details) details.open = true;
}

async function enhanceStaticSearch() {
  const form = document.getElementById("search-form");
  const list = document.getElementById("results-list");
  const status = document.getElementById("results-status");
  if (!form || !list || !status || !document.body.hasAttribute("data-search-index")) return;
  const params = new URLSearchParams(location.search);
  const q = (params.get("q") || "").trim();
  form.querySelector("#q").value = q;
  if (!q) return;
  status.textContent = "Searching…";
  let index;
  try {
    index = await (await fetch(document.body.getAttribute("data-search-index"))).json();
  } catch (err) {
    status.textContent = "The search index could not be loaded (" + err.message + ").";
    return;
  }
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const snapshot = params.get("snapshot") || "";
  const path = params.get("path") || "";
  const flag = params.get("flag") || "";
  const hits = index.errors.filter((e) => {
    const hay = (e.message + " " + e.paths.join(" ") + " " + e.flags.join(" ")).toLowerCase();
    return words.every((w) => hay.includes(w)) &&
      (!snapshot || e.snapshots.includes(snapshot)) &&
      (!path || e.paths.some((p) => p.startsWith(path))) &&
      (!flag || e.flags.includes(flag.startsWith("-") ? flag : "--" + flag));
  });
  status.textContent = hits.length + (hits.length === 1 ? " error matches" : " errors match") +
    " “" + q + "”" + (hits.length > 200 ? "; showing the first 200." : ".");
  list.replaceChildren();
  for (const e of hits.slice(0, 200)) {
    list.appendChild(hitItem(e.href, e.title, [e.exception, e.where, "in " + e.snapshots.join(", ")]));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  enhancePasteBox();
  enhanceSnapshotSwitch();
  openHashTarget();
  enhanceStaticSearch();
});
window.addEventListener("hashchange", openHashTarget);
