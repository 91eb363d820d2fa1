// planshell browser review. Plan text reaches this script only as server-escaped
// HTML already in the document and as data attributes read with .dataset; the
// script writes text with textContent/value and builds nodes with createElement.
// It never uses innerHTML, outerHTML, insertAdjacentHTML or document.write.
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

  for (const block of document.querySelectorAll("section.block")) {
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
      if (pendingComments()) { status("You have comments: Save feedback sends them, or remove them to approve."); return; }
      dialog.showModal();
      document.getElementById("confirm-cancel").focus();
    });
    document.getElementById("confirm-cancel").addEventListener("click", () => dialog.close());
    document.getElementById("confirm-ok").addEventListener("click", async () => {
      dialog.close();
      const { status: code, reply } = await post("api/approve", { version });
      if (code === 200) finish("Approved: the agent runs the plan now. You can close this tab.");
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
  const unshown = document.querySelector("details.unshown-lines");
  if (unshown) {
    document.addEventListener("keydown", (event) => {
      const target = event.target;
      if (event.key !== "h" || event.ctrlKey || event.metaKey || event.altKey) return;
      if (target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT")) return;
      unshown.open = !unshown.open;
      if (unshown.open) unshown.scrollIntoView({ block: "nearest" });
    });
  }

  window.addEventListener("beforeunload", (event) => {
    if (!finished && (unsavedBox() || pendingComments())) event.preventDefault();
  });

  const events = new EventSource("events");
  events.addEventListener("closed", (event) => {
    events.close();
    if (!finished) finish("This review is closed (" + (event.data || "closed") + ").");
  });
})();
