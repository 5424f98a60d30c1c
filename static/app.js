/* Small behaviours on top of htmx: Enter to send, the sources sheet, notices, announcements,
   scrolling, the patches of a streaming answer, and answers whose stream is lost. */
(function () {
  "use strict";

  // What only holds where this script runs (the "Enter sends" hint) shows under html.js.
  document.documentElement.classList.add("js");

  var TOAST_MS = 3500;
  // Failed (re)connections in a row, none of them opened, before an answer's stream gives up.
  var MAX_STREAM_FAILURES = 4;
  var toastTimer = null;
  var toastBox = null;
  var announcer = null;

  function toastEl() {
    return toastBox || (toastBox = document.getElementById("toast"));
  }

  function announcerEl() {
    return announcer || (announcer = document.getElementById("announcer"));
  }

  function popoverOpen(el) {
    try { return el.matches(":popover-open"); } catch (e) { return false; }
  }

  // An open modal sheet makes the rest of the page inert: not clickable and not read out.
  // A notice or an announcement made meanwhile goes inside the topmost one.
  function host() {
    var open = document.querySelectorAll("dialog[open]");
    for (var i = open.length - 1; i >= 0; i--) {
      try { if (open[i].matches(":modal")) return open[i]; } catch (e) { return document.body; }
    }
    return document.body;
  }

  // A live region reads out a change of its text: empty it, then fill it a moment later.
  function say(el, text) {
    window.clearTimeout(el.sayTimer);
    el.textContent = "";
    el.sayTimer = window.setTimeout(function () { el.textContent = text; }, 30);
  }

  function hideToast() {
    var box = toastEl();
    if (!box) return;
    window.clearTimeout(box.sayTimer);
    if (popoverOpen(box)) box.hidePopover();
    box.hidden = true;
    box.textContent = "";
  }

  function toast(text) {
    var box = toastEl();
    if (!box || !text) return;
    // Shown again, a popover goes to the top of the top layer, above a sheet opened since.
    if (popoverOpen(box)) box.hidePopover();
    var where = host();
    if (box.parentNode !== where) where.appendChild(box);
    box.hidden = false;
    if (typeof box.showPopover === "function") box.showPopover();
    say(box, text);
    window.clearTimeout(toastTimer);
    toastTimer = window.setTimeout(hideToast, TOAST_MS);
  }

  function announce(text) {
    var el = announcerEl();
    if (!el || !text) return;
    var where = host();
    if (el.parentNode !== where) where.appendChild(el);
    say(el, text);
  }

  // A closed sheet hands back what was lent to it: a notice inside it would never be seen.
  document.addEventListener("close", function (event) {
    var dialog = event.target;
    if (!(dialog instanceof HTMLDialogElement)) return;
    var box = toastEl();
    if (box && dialog.contains(box)) { hideToast(); document.body.appendChild(box); }
    var el = announcerEl();
    if (el && dialog.contains(el)) document.body.appendChild(el);
    // The phone's Chats dialog gives the sidebar's list back, and focus to its button.
    var held = dialog.heldHome;
    if (held && dialog.contains(held.el)) held.parent.insertBefore(held.el, held.next);
    dialog.heldHome = null;
    if (dialog.opener && document.contains(dialog.opener)) dialog.opener.focus();
    dialog.opener = null;
  }, true);

  // A dialog with `data-holds` shows an element of the page while open (the phone's Chats
  // dialog shows the sidebar's list: one copy of it, so its ids and htmx targets stay one).
  function lend(dialog) {
    var id = dialog.getAttribute("data-holds");
    var el = id && document.getElementById(id);
    var slot = dialog.querySelector("[data-slot]");
    if (!el || !slot || slot.contains(el)) return;
    dialog.heldHome = {el: el, parent: el.parentNode, next: el.nextSibling};
    slot.appendChild(el);
  }

  // `More chats` and `More results` put the next page in place of the link: focus goes to
  // the first chat of that page, not back to the top of the document.
  var morePage = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var link = event.target instanceof Element ? event.target : null;
    if (!link || !link.matches(".more-link")) return;
    var list = link.closest(".sessions, .results");
    morePage = list && {list: list, count: list.querySelectorAll(".session-link, .result-link").length};
  });
  document.addEventListener("htmx:afterSettle", function () {
    if (!morePage) return;
    var next = morePage.list.querySelectorAll(".session-link, .result-link")[morePage.count];
    morePage = null;
    if (next) next.focus();
  });

  // Answers still streaming: a new question waits until they are done.
  var streaming = new Set();
  var failures = new Map();

  function busy() {
    return streaming.size > 0;
  }

  function showBusy() {
    var form = document.getElementById("composer");
    if (form) form.classList.toggle("is-busy", busy());
    // Faded while an answer is written: say it is unavailable, not just draw it so.
    var send = form && form.querySelector(".send");
    if (send) send.setAttribute("aria-disabled", String(busy()));
  }

  function finish(article) {
    streaming.delete(article);
    failures.delete(article);
    article.removeAttribute("aria-busy");
    showBusy();
  }

  function plainText(el) {
    var copy = el.cloneNode(true);
    copy.querySelectorAll(".cite, .cite-tip, .code-copy, .chooser, .visually-hidden").forEach(function (n) { n.remove(); });
    return (copy.textContent || "").replace(/\s+/g, " ").trim();
  }

  // Read a finished answer out once: its text (without citation numbers), then what
  // went wrong or how many sources it has.
  function announceAnswer(article) {
    var parts = [".answer-body", ".answer-error", ".answer-stopped", ".answer-interrupted",
      ".sources-label"]
      .map(function (selector) {
        var el = article.querySelector(selector);
        return el ? plainText(el) : "";
      })
      .filter(Boolean);
    announce(parts.length ? parts.join(" ") : "The answer is ready.");
  }

  // The stream is lost for good: say so in the answer, and free the question box.
  function giveUp(article, source) {
    // Without `sse-connect` the extension's next retry finds nothing to connect to.
    article.removeAttribute("sse-connect");
    if (source) source.close();
    finish(article);
    var answer = article.querySelector(".answer");
    var notice = document.getElementById("interrupted-notice");
    if (answer && !answer.querySelector(".answer-interrupted")) {
      answer.querySelectorAll(".thinking").forEach(function (n) { n.remove(); });
      answer.querySelectorAll(".is-streaming").forEach(function (n) {
        n.classList.remove("is-streaming");
      });
      if (notice instanceof HTMLTemplateElement) {
        answer.appendChild(notice.content.cloneNode(true));
      }
    }
    toast("Connection lost. Reload the page.");
  }

  function conversation() {
    return document.getElementById("conversation");
  }

  function nearBottom() {
    var el = document.scrollingElement || document.documentElement;
    return el.scrollHeight - el.scrollTop - el.clientHeight < 160;
  }

  function scrollToEnd() {
    var el = document.scrollingElement || document.documentElement;
    el.scrollTop = el.scrollHeight;
  }

  document.addEventListener("keydown", function (event) {
    var box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || box.id !== "message") return;
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (box.value.trim() && box.form) box.form.requestSubmit();
    }
  });

  document.addEventListener("input", function (event) {
    var box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || box.id !== "message") return;
    box.style.height = "auto";
    box.style.height = Math.min(box.scrollHeight, 220) + "px";
  });

  // A table copied as a Markdown table: a header row, its rule, then one line a row.
  function markdownTable(table) {
    var lines = [];
    Array.prototype.forEach.call(table.rows, function (row, index) {
      var cells = Array.prototype.map.call(row.cells, function (cell) {
        return (cell.textContent || "").replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");
      });
      lines.push("| " + cells.join(" | ") + " |");
      if (index === 0) lines.push("|" + cells.map(function () { return " --- "; }).join("|") + "|");
    });
    return lines.join("\n");
  }

  // Copy: the answer's words, its citations as [n], then its sources, one a line.
  function answerText(article) {
    var body = article.querySelector(".answer-body");
    if (!body) return "";
    var copy = body.cloneNode(true);
    copy.querySelectorAll(".cite-tip, .code-copy").forEach(function (n) { n.remove(); });
    copy.querySelectorAll(".cite").forEach(function (chip) {
      chip.replaceWith(" [" + chip.textContent.trim() + "]");
    });
    copy.querySelectorAll("table").forEach(function (table) {
      table.replaceWith("\n" + markdownTable(table) + "\n");
    });
    var text = copy.innerText || copy.textContent || "";
    var rows = article.querySelectorAll(".sheet .source-list > li");
    if (!rows.length) return text.trim();
    var lines = ["", "Sources:"];
    rows.forEach(function (row, index) {
      var title = row.querySelector(".source-title");
      var meta = row.querySelector(".source-meta");
      var link = row.querySelector("a.source-row[target='_blank'], a.source-original");
      var line = (index + 1) + ". " + (title ? title.textContent.trim() : "");
      var snippet = row.querySelector(".source-snippet");
      if (meta && meta.textContent.trim()) line += " (" + meta.textContent.trim() + ")";
      if (snippet && snippet.textContent.trim()) line += ": " + snippet.textContent.trim();
      if (link) line += " " + link.href;
      lines.push(line);
    });
    return text.trim() + "\n" + lines.join("\n");
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("[data-copy-answer]") : null;
    var article = button && button.closest("article");
    if (!article || !navigator.clipboard) return;
    navigator.clipboard.writeText(answerText(article)).then(function () {
      toast("Copied the answer and its sources.");
    }, function () {
      toast("Copying was not allowed here. Select the text to copy it instead.");
    });
  });

  // A link that acts as a button (the Sources bar) opens with Space too, as a button does.
  document.addEventListener("keydown", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (event.key !== " " || !target || !target.matches("a[role='button']")) return;
    event.preventDefault();
    target.click();
  });

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    var opener = target.closest("[data-open-dialog]");
    if (opener) {
      // The bar is a link to the sources page (for pages without JavaScript): open the sheet.
      event.preventDefault();
      var dialog = document.getElementById(opener.getAttribute("data-open-dialog"));
      if (dialog instanceof HTMLDialogElement && !dialog.open) {
        lend(dialog);
        dialog.opener = opener;
        dialog.showModal();
      }
      return;
    }
    var notice = target.closest("[data-notice]");
    if (notice) {
      toast(notice.getAttribute("data-notice"));
      return;
    }
    // A click on the backdrop (the dialog itself, outside its inner box) closes the sheet.
    if (target instanceof HTMLDialogElement && target.open) target.close();
  });

  // Citation previews: hover and focus show one (CSS); a tap on a phone shows it first and
  // opens the source on a second tap; a citation that opens nothing shows it on a click.
  // One preview at a time, and Escape hides it.
  function closePreviews(except) {
    document.querySelectorAll(".cite-wrap.is-open").forEach(function (wrap) {
      if (wrap !== except) wrap.classList.remove("is-open");
    });
  }

  var touchHover = window.matchMedia ? window.matchMedia("(hover: none)") : null;

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var cite = target && target.closest(".cite");
    var wrap = cite && cite.closest(".cite-wrap");
    if (!wrap) {
      if (!(target && target.closest(".cite-tip"))) closePreviews(null);
      return;
    }
    wrap.classList.remove("is-dismissed");
    var touch = event.pointerType === "touch" || (touchHover && touchHover.matches);
    if (cite.hasAttribute("data-preview")) {
      closePreviews(wrap);
      wrap.classList.toggle("is-open");
      event.stopImmediatePropagation();
      return;
    }
    if (touch && !wrap.classList.contains("is-open")) {
      event.preventDefault();
      event.stopImmediatePropagation();
      closePreviews(wrap);
      wrap.classList.add("is-open");
    }
  }, true);

  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var shown = document.querySelectorAll(".cite-wrap.is-open, .cite-wrap:hover, .cite-wrap:focus-within");
    shown.forEach(function (wrap) { wrap.classList.remove("is-open"); wrap.classList.add("is-dismissed"); });
  });

  document.addEventListener("mouseout", function (event) {
    var wrap = event.target instanceof Element ? event.target.closest(".cite-wrap") : null;
    if (wrap && !wrap.contains(event.relatedTarget)) wrap.classList.remove("is-dismissed");
  });

  // While an answer streams, `patch` events redraw only its open blocks (the last ones, still
  // growing) and settle the blocks that can no longer change: those are drawn once, in
  // `.answer-settled`. The data is "BASE KEEP SETTLE HTML": keep KEEP characters of the open
  // blocks' HTML last sent (BASE long), add HTML, then settle the first SETTLE characters
  // (webapp/web/stream.py). A patch that does not fit is skipped; the final `answer` event
  // draws the whole answer anyway.
  function patch(article, data) {
    var body = article.querySelector(".answer-body.is-streaming");
    var head = /^(\d+) (\d+) (\d+) /.exec(data);
    if (!body || !head) return;
    var sent = typeof body.openHtml === "string" ? body.openHtml : "";
    var keep = Number(head[2]);
    var settle = Number(head[3]);
    if (keep > 0 && sent.length !== Number(head[1])) return;
    var html = sent.slice(0, keep) + data.slice(head[0].length);
    var settled = body.querySelector(":scope > .answer-settled");
    if (settle > 0) {
      if (!settled) {
        settled = document.createElement("div");
        settled.className = "answer-settled";
        body.prepend(settled);
      }
      settled.insertAdjacentHTML("beforeend", html.slice(0, settle));
    }
    while (body.lastChild && body.lastChild !== settled) body.lastChild.remove();
    body.openHtml = html.slice(settle);
    body.insertAdjacentHTML("beforeend", body.openHtml);
  }

  var patched = new WeakSet();

  // A Stop being pressed stays where it is: what the stream brings the answer (its patches,
  // and the whole `answer` and `sources` fragments htmx would swap in) waits until the press
  // ends. Each new line of text moves the button below it down, a fragment swapped in replaces
  // the button itself, and a press whose release lands off the button clicks nothing: the
  // answer went on being written.
  var pressed = null;  // the article whose Stop is held down
  var waiting = [];  // what came meanwhile, in order, each to be done on release
  function release() {
    var queued = waiting;
    pressed = null;
    waiting = [];
    queued.forEach(function (later) { later(); });
  }
  function held(article, later) {
    if (!pressed || pressed !== article) return false;
    waiting.push(later);
    return true;
  }
  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var html = event.detail.data;
    var later = function () {
      if (document.body.contains(target)) htmx.swap(target, html, { swapStyle: "innerHTML" });
    };
    if (target && held(target.closest("article.message"), later)) event.preventDefault();
  });
  document.addEventListener("pointerdown", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var button = target && target.closest(".answer-stop button");
    if (button) pressed = button.closest("article.message");
  }, true);
  ["pointerup", "pointercancel"].forEach(function (type) {
    // After the click the release makes (it comes right after pointerup).
    document.addEventListener(type, function () { if (pressed) setTimeout(release, 0); }, true);
  });
  // A release the page never hears of (the window left meanwhile) lets the answer go on too.
  window.addEventListener("blur", function () { if (pressed) release(); });

  document.addEventListener("htmx:sseOpen", function (event) {
    var article = event.detail.elt || event.target;
    var source = event.detail.source;
    streaming.add(article);
    failures.delete(article);
    showBusy();
    // The same source opens again after the browser reconnects it: listen to it once.
    if (source && !patched.has(source)) {
      patched.add(source);
      source.addEventListener("patch", function (message) {
        if (held(article, function () { patch(article, message.data); })) return;
        var stick = nearBottom();
        patch(article, message.data);
        if (stick) scrollToEnd();
        showJump();
      });
    }
  });

  document.addEventListener("htmx:sseClose", function (event) {
    var article = event.detail.elt || event.target;
    var done = event.detail.type === "message";  // its `done` arrived
    var later = function () {
      finish(article);
      if (done) announceAnswer(article);
    };
    if (!held(article, later)) later();
  });

  // The browser reconnects by itself after a dropped stream, and the extension after a
  // refused one (a 401 once signed out, a 404, a server error), both forever: give up
  // after a few failures in a row.
  document.addEventListener("htmx:sseError", function (event) {
    var article = event.detail.elt || event.target;
    if (!(article instanceof Element) || !article.hasAttribute("sse-connect")) return;
    var count = (failures.get(article) || 0) + 1;
    failures.set(article, count);
    streaming.add(article);
    showBusy();
    if (count >= MAX_STREAM_FAILURES) giveUp(article, event.detail.source);
  });

  // A question sent is shown at once, with a status line, before the server has answered;
  // the server's own copy replaces both when it comes (or the text goes back in the box).
  function showAsked(form) {
    var field = form.querySelector("[name='message']");
    var text = field ? field.value.trim() : "";
    var list = conversation();
    if (!text || !list) return;
    var asked = document.createElement("article");
    asked.className = "message user is-pending";
    asked.setAttribute("aria-label", "You asked");
    var bubble = document.createElement("div");
    bubble.className = "bubble";
    bubble.textContent = text;
    asked.appendChild(bubble);
    var waiting = document.createElement("article");
    waiting.className = "message assistant is-pending";
    waiting.setAttribute("aria-label", "Answer");
    var line = document.createElement("p");
    line.className = "thinking";
    line.setAttribute("role", "status");
    for (var i = 0; i < 3; i++) {
      var dot = document.createElement("span");
      dot.className = "dot";
      dot.setAttribute("aria-hidden", "true");
      line.appendChild(dot);
    }
    var step = document.createElement("span");
    step.className = "thinking-step";
    step.textContent = "Sending your question…";
    line.appendChild(step);
    waiting.appendChild(line);
    list.appendChild(asked);
    list.appendChild(waiting);
    form.pendingAsk = { nodes: [asked, waiting], text: text };
    if (form.id === "composer" && field) { field.value = ""; field.style.height = "auto"; }
    scrollToEnd();
  }

  function dropAsked(form, failed) {
    var pending = form && form.pendingAsk;
    if (!pending) return;
    form.pendingAsk = null;
    pending.nodes.forEach(function (n) { n.remove(); });
    var box = document.getElementById("message");
    if (failed && form.id === "composer" && box && !box.value) box.value = pending.text;
  }

  function asks(form) {
    return form instanceof HTMLFormElement && form.closest(".chat") &&
      form.getAttribute("hx-target") === "#conversation" && form.querySelector("[name='message']");
  }

  // (Stop is what a person may want while an answer is being written.)
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt;
    if (busy() && form instanceof HTMLFormElement && form.closest(".chat") &&
        !form.classList.contains("answer-stop")) {
      event.preventDefault();
      toast("Wait for the answer to finish.");
      return;
    }
    if (asks(form)) showAsked(form);
  });

  // Previous version, Next version and Edit swap the message they belong to: the focus stays
  // there (on the same button, or the edit box), not lost with the element that had it.
  var refocus = null;
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var article = elt instanceof Element && elt.closest(".chat article.message");
    if (!article || event.defaultPrevented) { refocus = null; return; }
    var button = elt.querySelector && elt.querySelector("button[aria-label]");
    refocus = {
      index: Array.prototype.indexOf.call(document.querySelectorAll(".chat article.message"), article),
      label: button ? button.getAttribute("aria-label") : null
    };
  });

  document.addEventListener("htmx:afterSettle", function () {
    var want = refocus;
    refocus = null;
    var article = want && document.querySelectorAll(".chat article.message")[want.index];
    if (!article) return;
    var target = article.querySelector(".question-edit textarea") ||
      (want.label && article.querySelector('.versions button[aria-label="' + want.label + '"]:not([disabled])')) ||
      article.querySelector(".versions button:not([disabled])");
    if (target) target.focus();
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (!event.detail.shouldSwap) return;  // refused: afterRequest puts the text back
    dropAsked(event.detail.requestConfig && event.detail.requestConfig.elt, false);
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    dropAsked(form, !event.detail.successful);
    if (form && form.id === "composer" && event.detail.successful) {
      form.reset();
      var box = form.querySelector("textarea");
      if (box) { box.style.height = "auto"; box.focus(); }
    } else if (asks(form) && event.detail.successful) {
      // A suggestion's form goes away with the empty state: keep the focus in the page.
      var message = document.getElementById("message");
      if (message) message.focus();
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target !== conversation()) return;
    scrollToEnd();
    if (conversation().querySelector(".thinking")) announce("Thinking…");
  });

  // Show earlier, loaded in place: the focus goes on to the next such link, or else to the
  // oldest message now shown, not back to the top of the page.
  document.addEventListener("htmx:afterSwap", function (event) {
    var asked = event.detail.requestConfig && event.detail.requestConfig.elt;
    if (!(asked instanceof HTMLElement) || !asked.classList.contains("show-earlier-link")) return;
    if (asked.dataset.shown) return;  // told once for each element put in place
    asked.dataset.shown = "1";
    var list = conversation();
    var next = list && list.querySelector(".show-earlier-link");
    var oldest = list && list.querySelector(".message");
    if (next) next.focus();
    else if (oldest) { oldest.setAttribute("tabindex", "-1"); oldest.focus(); }
  });

  document.addEventListener("htmx:sseBeforeMessage", function () {
    document.body.dataset.stick = nearBottom() ? "1" : "";
  });

  document.addEventListener("htmx:sseMessage", function () {
    if (document.body.dataset.stick === "1") scrollToEnd();
  });

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && xhr.status === 401) return;
    var text = "";
    if (xhr && xhr.responseText) {
      // Read the server's message as text only: nothing from the response is run.
      var doc = new DOMParser().parseFromString(xhr.responseText, "text/html");
      var note = doc.querySelector(".notice, h1 + p, p");
      text = (note ? note.textContent : doc.body.textContent || "").trim();
    }
    toast(text || "Something went wrong. Please try again.");
  });

  document.addEventListener("htmx:sendError", function () {
    toast("The server could not be reached. Check your connection and try again.");
  });

  // A source icon that fails to load (a site's icon the browser cannot draw) becomes the
  // generic one it names, never a broken image. Inline onerror is barred by the CSP; an
  // image's error does not bubble, so it is caught on the way down.
  function useFallback(img) {
    var fallback = img.getAttribute("data-fallback");
    if (fallback && img.getAttribute("src") !== fallback) img.setAttribute("src", fallback);
  }

  document.addEventListener("error", function (event) {
    var img = event.target;
    if (img && img.tagName === "IMG" && img.hasAttribute("data-fallback")) useFallback(img);
  }, true);


  // A finished answer's code blocks each get a button that copies just the code.
  function addCodeButtons(root) {
    root.querySelectorAll(".answer-body:not(.is-streaming) pre").forEach(function (pre) {
      if (pre.parentNode.classList.contains("code-block")) return;
      var box = document.createElement("div");
      box.className = "code-block";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "answer-button code-copy";
      button.textContent = "Copy code";
      pre.replaceWith(box);
      box.appendChild(button);
      box.appendChild(pre);
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest(".code-copy") : null;
    var pre = button && button.parentNode.querySelector("pre");
    if (!pre || !navigator.clipboard) return;
    navigator.clipboard.writeText(pre.textContent || "").then(function () {
      toast("Copied the code.");
    }, function () {
      toast("Copying was not allowed here. Select the text to copy it instead.");
    });
  });

  document.addEventListener("htmx:sseClose", function (event) {
    var article = event.detail.elt || event.target;
    if (article instanceof Element) addCodeButtons(article);
  });

  // Jump to latest: shown while an answer grows and the page is scrolled away from its end.
  function jumpButton() {
    return document.getElementById("jump-latest");
  }

  function showJump() {
    var button = jumpButton();
    if (button) button.hidden = !(busy() && !nearBottom());
  }

  window.addEventListener("scroll", showJump, { passive: true });
  document.addEventListener("htmx:sseMessage", showJump);
  document.addEventListener("htmx:sseClose", showJump);

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest("#jump-latest") : null;
    if (!button) return;
    scrollToEnd();
    button.hidden = true;
    var box = document.getElementById("message");
    if (box) box.focus({ preventScroll: true });
  });

  // One popover at a time: "Delete chat…" closes the chat's menu before it asks.
  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element ? event.target.closest(".session-delete") : null;
    var ask = button && document.getElementById(button.getAttribute("popovertarget"));
    var menu = button && button.closest("[popover]");
    if (!ask || !menu || typeof ask.showPopover !== "function") return;
    event.preventDefault();
    menu.hidePopover();
    ask.showPopover();
    var cancel = ask.querySelector(".session-cancel");
    if (cancel) cancel.focus();
  });

  // Cancel on that question hands the focus back to the chat's "⋯" button.
  document.addEventListener("click", function (event) {
    var cancel = event.target instanceof Element ? event.target.closest(".session-cancel") : null;
    var ask = cancel && cancel.closest("[popover][role='dialog']");
    var more = ask && ask.closest(".session") && ask.closest(".session").querySelector(".session-more");
    if (more) window.setTimeout(function () { more.focus(); }, 0);
  });

  // Back to the answer: a page opened from an answer links back to its chat (the server reads
  // where it came from); the answer clicked is remembered here, so the link lands on it.
  var BACK_KEY = "back-to-answer";

  document.addEventListener("click", function (event) {
    var link = event.target instanceof Element ? event.target.closest("a[href^='/']") : null;
    var article = link && link.closest("article.message.assistant");
    if (!article || !article.id) return;
    try {
      sessionStorage.setItem(BACK_KEY, JSON.stringify({ chat: location.pathname, id: article.id }));
    } catch (e) { /* storage may be off: the link goes back to the chat */ }
  });

  function aimBackLink() {
    var link = document.querySelector("a[data-back-to-answer]");
    if (!link || link.hash) return;
    try {
      var seen = JSON.parse(sessionStorage.getItem(BACK_KEY) || "null");
      if (seen && seen.chat === link.pathname && /^message-[\w-]+$/.test(seen.id)) {
        link.hash = seen.id;
      }
    } catch (e) { /* nothing remembered */ }
  }

  document.addEventListener("DOMContentLoaded", function () {
    // Icons that failed before this script ran.
    document.querySelectorAll("img[data-fallback]").forEach(function (img) {
      if (img.complete && img.naturalWidth === 0 && img.getAttribute("src")) useFallback(img);
    });
    aimBackLink();
    addCodeButtons(document);
    var list = conversation();
    if (!list || !list.querySelector(".message")) return;
    // Back from a page the answer opened: that answer in view, not the end of the chat.
    var aimed = location.hash.length > 1 ? document.getElementById(location.hash.slice(1)) : null;
    if (aimed && list.contains(aimed)) aimed.scrollIntoView({ block: "start" });
    else scrollToEnd();
  });
})();
