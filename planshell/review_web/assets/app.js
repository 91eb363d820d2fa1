// planshell browser review. Plan text reaches this script only as server-escaped
// HTML already in the document and as data attributes read with .dataset; the
// script writes text with textContent/value and builds nodes with createElement.
// It never uses innerHTML, outerHTML, insertAdjacentHTML or document.write. A long
// plan's later sections arrive the same way as the first screen: as the server's
// escaped HTML (GET sections), parsed with DOMParser into an inert document (no
// script runs there; the CSP forbids inline script anyway) and moved into the page.
"use strict";

(function () {
  const body = document.body;
  const csrf = body.dataset.csrf;
  const version = body.dataset.version;
  const boxes = new Map(); // block element -> {wrap, area, committed, initial}
  let finished = false;

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function status(text) {
    document.getElementById("status").textContent = text;
  }

  function banner(text, offerReload) {
    const box = document.getElementById("banner");
    document.getElementById("banner-text").textContent = text;
    document.getElementById("reload").hidden = !offerReload;
    box.hidden = false;
  }

  function finish(text) {
    finished = true;
    status("");  // the banner says what happened: no stale "Comment kept…" beside it
    banner(text, false);
    for (const id of ["save", "approve", "close"]) {
      const button = document.getElementById(id);
      if (button) button.disabled = true;
    }
    body.classList.add("finished");
  }

  // -- comment boxes

  function unsavedBox() {
    for (const [, box] of boxes) {
      if (box.editing && box.area.value.trim() !== box.committed.trim()) return box;
    }
    return null;
  }

  function pendingComments() {
    for (const [, box] of boxes) {
      if (box.committed.trim() !== box.initial.trim()) return true;
    }
    return false;
  }

  function showCommitted(box) {
    box.editing = false;
    box.area.hidden = true;
    box.buttons.hidden = true;
    box.view.textContent = box.committed;
    box.view.hidden = !box.committed.trim();
    box.edit.hidden = !box.committed.trim();
    box.wrap.hidden = !box.committed.trim();
    box.block.classList.toggle("has-comment", Boolean(box.committed.trim()));
  }

  function openBox(block, prefill) {
    let box = boxes.get(block);
    if (!box) box = makeBox(block, "");
    box.editing = true;
    box.wrap.hidden = false;
    box.view.hidden = true;
    box.edit.hidden = true;
    box.area.hidden = false;
    box.buttons.hidden = false;
    if (prefill && !box.area.value.trim()) box.area.value = prefill;
    box.area.focus();
    return box;
  }

  function makeBox(block, saved) {
    const wrap = el("div", { class: "comment" });
    const view = el("p", { class: "comment-text" });
    const edit = el("button", { type: "button", class: "link" }, "Edit comment");
    const area = el("textarea", { rows: "3", "aria-label": "Comment on this block", placeholder: "Comment on this block" });
    const buttons = el("div", { class: "comment-actions" });
    const done = el("button", { type: "button", class: "done" }, "Done");
    const remove = el("button", { type: "button" }, "Remove");
    buttons.append(done, remove);
    wrap.append(view, edit, area, buttons);
    block.after(wrap);
    const box = { block, wrap, view, edit, area, buttons, committed: saved, initial: saved, editing: false };
    area.value = saved;
    boxes.set(block, box);
    done.addEventListener("click", () => {
      box.committed = area.value.trim();
      showCommitted(box);
      status(box.committed ? "Comment kept; Save feedback sends it." : "");
    });
    remove.addEventListener("click", () => {
      area.value = "";
      box.committed = "";
      showCommitted(box);
    });
    edit.addEventListener("click", () => openBox(block));
    showCommitted(box);
    return box;
  }

  function setupComments(block) {
    const add = el("button", { type: "button", class: "add-comment", title: "Comment on this block" }, "+ comment");
    add.addEventListener("click", () => openBox(block));
    block.prepend(add);
    if (block.dataset.comment) makeBox(block, block.dataset.comment);
  }

  document.getElementById("plan").addEventListener("mouseup", () => {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed) return;
    const node = selection.anchorNode;
    const start = node && (node.nodeType === 1 ? node : node.parentElement);
    const block = start && start.closest("section.block");
    if (!block) return;
    const quoted = selection.toString().trim().replace(/\s+/g, " ").slice(0, 200);
    openBox(block, quoted ? "\u201c" + quoted + "\u201d: " : "");
  });

  function refuseIfUnsaved(what) {
    const box = unsavedBox();
    if (box) {
      status("A comment box holds unsaved text: press Done or Remove before you " + what + ".");
      box.area.focus();
      return true;
    }
    return false;
  }

  // -- coverage: a section counts as seen once every part of it has been on screen
  // (the TUI's rule: not necessarily at once, so a block taller than the window is
  // seen after scrolling through it). Seen sections go to planshell (api/seen), where
  // they count in the terminal's coverage and its "Not viewed: ..." question.

  const sectionCount = Number(body.dataset.sections) || 0;
  const SLACK = 2; // px of rounding
  const seenSections = new Set();
  const unsent = new Set();
  const blocksOf = new Map(); // section index -> its block elements
  const parts = new Map(); // block -> {height, spans: [[from, to], ...] seen so far, seen}
  const visible = new Set(); // blocks the IntersectionObserver says are in the window
  let frame = 0;
  let sendTimer = 0;
  let stale = false;

  let loaded = Number(body.dataset.loaded) || 0; // sections [0, loaded) are in the page
  let extrasReady = body.dataset.extras !== "lazy";
  let observer = null;

  function setupCoverage(block) {
    const index = Number(block.dataset.section);
    if (!blocksOf.has(index)) blocksOf.set(index, []);
    blocksOf.get(index).push(block);
    parts.set(block, { height: -1, spans: [], seen: false });
    if (observer) observer.observe(block);
  }

  function windowRows() {
    // The sticky bar covers the top of the window: what is under it is not on screen.
    const bar = document.querySelector(".bar");
    const top = bar ? Math.max(0, bar.getBoundingClientRect().bottom) : 0;
    return [top, document.documentElement.clientHeight];
  }

  function measure(block) {
    const state = parts.get(block);
    if (state.seen) return;
    const rect = block.getBoundingClientRect();
    const height = Math.round(rect.height);
    if (height !== state.height) { state.height = height; state.spans = []; } // reflowed
    const [top, bottom] = windowRows();
    if (height <= SLACK) {
      if (rect.top >= top - SLACK && rect.top <= bottom + SLACK) state.seen = true;
      return;
    }
    const from = Math.max(rect.top, top) - rect.top;
    const to = Math.min(rect.bottom, bottom) - rect.top;
    if (to <= from) return;
    const spans = [...state.spans, [from, to]].sort((a, b) => a[0] - b[0]);
    const merged = [];
    for (const span of spans) {
      const last = merged[merged.length - 1];
      if (last && span[0] <= last[1] + SLACK) last[1] = Math.max(last[1], span[1]);
      else merged.push([span[0], span[1]]);
    }
    state.spans = merged;
    if (merged.length === 1 && merged[0][0] <= SLACK && merged[0][1] >= height - SLACK) {
      state.seen = true;
      state.spans = [];
    }
  }

  function paintCoverage() {
    const line = document.getElementById("coverage");
    if (line && sectionCount) line.textContent = seenSections.size + "/" + sectionCount + " sections seen";
    for (const item of document.querySelectorAll(".outline li[data-section]")) {
      item.classList.toggle("seen", seenSections.has(Number(item.dataset.section)));
    }
  }

  function checkCoverage() {
    for (const block of visible) measure(block);
    for (let index = 0; index < Math.min(sectionCount, loaded); index++) { // not yet in the page: not seen
      if (seenSections.has(index)) continue;
      const blocks = blocksOf.get(index) || []; // none: nothing of it to see
      if (blocks.every((block) => parts.get(block).seen)) {
        seenSections.add(index);
        unsent.add(index);
      }
    }
    paintCoverage();
    if (unsent.size && !sendTimer) sendTimer = setTimeout(sendSeen, 250);
  }

  function scheduleCoverage() {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; checkCoverage(); });
  }

  async function sendSeen() {
    clearTimeout(sendTimer);
    sendTimer = 0;
    if (!unsent.size || finished || stale) return;
    const sections = [...unsent].sort((a, b) => a - b);
    unsent.clear();
    let code = 0;
    let reply = {};
    try { ({ status: code, reply } = await post("api/seen", { version, sections })); } catch (e) { code = 0; }
    if (code === 409) {
      stale = true;
      banner((reply.error || "The plan changed.") + " Reload to review the new text.", true);
    } else if (code !== 200 && code !== 410) {
      for (const index of sections) unsent.add(index); // sent again with the next report
    }
  }

  if ("IntersectionObserver" in window) {
    observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (entry.isIntersecting) visible.add(entry.target);
        else visible.delete(entry.target);
      }
      scheduleCoverage();
    });
    window.addEventListener("scroll", scheduleCoverage, { passive: true });
    window.addEventListener("resize", scheduleCoverage);
  }

  function setupBlock(block) {
    setupComments(block);
    setupCoverage(block);
  }

  for (const block of document.querySelectorAll("section.block")) setupBlock(block);
  paintCoverage();

  // -- a long plan arrives in chunks after the first screen (GET sections, in order)

  let pendingJump = ""; // an outline target not yet in the page
  const plan = document.getElementById("plan");

  function parsed(html) {
    return new DOMParser().parseFromString(html, "text/html").body;
  }

  function complete() {
    return loaded >= sectionCount && extrasReady;
  }

  function loadingNote(what) {
    status("The plan is still loading (" + loaded + " of " + sectionCount +
      " sections): wait a moment before you " + what + ".");
  }

  async function getJson(path) {
    const response = await fetch(path, { credentials: "omit", cache: "no-store" });
    let reply = {};
    try { reply = await response.json(); } catch (e) { reply = {}; }
    return { status: response.status, reply };
  }

  async function loadRest() {
    while (loaded < sectionCount && !stale) {
      let code = 0;
      let reply = {};
      try {
        ({ status: code, reply } = await getJson("sections?from=" + loaded + "&version=" + encodeURIComponent(version)));
      } catch (e) { code = 0; }
      if (code === 409) {
        stale = true;
        banner((reply.error || "The plan changed.") + " Reload to review the new text.", true);
        return;
      }
      if (code !== 200 || !(Number(reply.next) > loaded)) {
        status("Loading the rest of the plan failed (" + code + "): Reload to try again.");
        return;
      }
      for (const node of [...parsed(String(reply.html)).children]) {
        const block = document.adoptNode(node);
        plan.append(block);
        setupBlock(block);
      }
      loaded = Number(reply.next);
      paintCoverage();
      scheduleCoverage();
      if (pendingJump && document.getElementById(pendingJump)) {
        document.getElementById(pendingJump).scrollIntoView();
        pendingJump = "";
      }
    }
    if (loaded >= sectionCount) plan.dataset.complete = "true";
  }

  async function loadExtras() {
    if (extrasReady) return;
    let code = 0;
    let reply = {};
    try { ({ status: code, reply } = await getJson("extras?version=" + encodeURIComponent(version))); } catch (e) { code = 0; }
    if (code !== 200) {
      if (code === 409) { stale = true; banner((reply.error || "The plan changed.") + " Reload to review the new text.", true); }
      else status("Loading the plan's notices failed (" + code + "): Reload to try again.");
      return;
    }
    for (const [id, key] of [["extras", "top"], ["confirm-extras", "confirm"]]) {
      const target = document.getElementById(id);
      for (const node of [...parsed(String(reply[key] || "")).childNodes]) target.append(document.adoptNode(node));
    }
    extrasReady = true;
  }

  document.querySelector(".outline").addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest("a");
    if (!link) return;
    const id = (link.getAttribute("href") || "").slice(1);
    if (id && !document.getElementById(id)) { event.preventDefault(); pendingJump = id; }
  });

  // -- talking to planshell

  async function post(path, data) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Planshell-CSRF": csrf },
      body: JSON.stringify(data),
      credentials: "omit",
      cache: "no-store",
    });
    let reply = {};
    try { reply = await response.json(); } catch (e) { reply = {}; }
    return { status: response.status, reply };
  }

  document.getElementById("save").addEventListener("click", async () => {
    if (finished || refuseIfUnsaved("save")) return;
    if (!complete()) { loadingNote("save"); return; }
    const comments = [];
    for (const [block, box] of boxes) {
      if (box.committed.trim()) {
        comments.push({ start: Number(block.dataset.start), end: Number(block.dataset.end), text: box.committed });
      }
    }
    if (!comments.length) { status("Write a comment first: + comment beside a block, or select text."); return; }
    const { status: code, reply } = await post("api/save", { version, comments });
    if (code === 200) {
      for (const [, box] of boxes) box.initial = box.committed;
      finish("Feedback saved in the plan file and sent to the model. You can close this tab.");
    } else if (code === 409) {
      banner((reply.error || "The plan changed.") + " Your comments are still here: copy them, then Reload.", true);
    } else {
      status(reply.error || "Saving failed (" + code + ").");
    }
  });

  const approve = document.getElementById("approve");
  const dialog = document.getElementById("confirm");
  if (approve) {
    approve.addEventListener("click", () => {
      if (finished || refuseIfUnsaved("approve")) return;
      if (!complete()) { loadingNote("approve"); return; }
      if (pendingComments()) { status("You have comments: Save feedback sends them, or remove them to approve."); return; }
      const unseen = sectionCount - seenSections.size;
      const note = document.getElementById("confirm-unseen");
      note.textContent = unseen
        ? unseen + " of " + sectionCount + " sections not viewed on this page: unless you saw them " +
          "in the terminal, planshell asks there (\u201cNot viewed: \u2026 \u2014 approve anyway?\u201d) first."
        : "";
      note.hidden = !unseen;
      dialog.showModal();
      document.getElementById("confirm-cancel").focus();
    });
    document.getElementById("confirm-cancel").addEventListener("click", () => dialog.close());
    document.getElementById("confirm-ok").addEventListener("click", async () => {
      dialog.close();
      checkCoverage();
      await sendSeen(); // what this page saw counts before the terminal decides
      const { status: code, reply } = await post("api/approve", { version });
      if (code === 200 && seenSections.size < sectionCount) {
        finish("Approval sent to planshell. Some sections were not viewed on this page: unless you " +
          "saw them in the terminal, it asks there first. You can close this tab.");
      } else if (code === 200) finish("Approved: the agent runs the plan now. You can close this tab.");
      else if (code === 409) banner(reply.error || "The plan changed.", true);
      else status(reply.error || "Approving failed (" + code + ").");
    });
  }

  document.getElementById("close").addEventListener("click", async () => {
    if (finished || refuseIfUnsaved("close")) return;
    if (pendingComments()) { status("You have unsaved comments: Save feedback, or remove them to close."); return; }
    await post("api/close", {});
    finish("Browser review closed; the review goes on in the terminal.");
  });

  document.getElementById("reload").addEventListener("click", () => window.location.reload());

  // h: show the lines the page does not render (as in the terminal review).
  document.addEventListener("keydown", (event) => {
    const unshown = document.querySelector("details.unshown-lines"); // a long plan's comes later
    if (!unshown) return;
    const target = event.target;
    if (event.key !== "h" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT")) return;
    unshown.open = !unshown.open;
    if (unshown.open) unshown.scrollIntoView({ block: "nearest" });
  });

  loadRest(); // the rest of the plan and its notices, side by side
  loadExtras();

  window.addEventListener("beforeunload", (event) => {
    if (!finished && (unsavedBox() || pendingComments())) event.preventDefault();
  });

  const events = new EventSource("events");
  events.addEventListener("closed", (event) => {
    events.close();
    if (!finished) finish("This review is closed (" + (event.data || "closed") + ").");
  });
})();
