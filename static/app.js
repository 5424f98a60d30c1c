/* Small behaviours on top of htmx: Enter to send, the sources sheet, notices, scrolling. */
(function () {
  "use strict";

  var toastTimer = null;

  function toast(text) {
    var box = document.getElementById("toast");
    if (!box || !text) return;
    box.textContent = text;
    box.hidden = false;
    window.clearTimeout(toastTimer);
    toastTimer = window.setTimeout(function () { box.hidden = true; }, 3500);
  }

  // Answers still streaming: a new question waits until they are done.
  var streaming = new Set();

  function busy() {
    return streaming.size > 0;
  }

  function showBusy() {
    var form = document.getElementById("composer");
    if (form) form.classList.toggle("is-busy", busy());
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

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    var opener = target.closest("[data-open-dialog]");
    if (opener) {
      var dialog = document.getElementById(opener.getAttribute("data-open-dialog"));
      if (dialog instanceof HTMLDialogElement && !dialog.open) dialog.showModal();
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

  document.addEventListener("htmx:sseOpen", function (event) {
    streaming.add(event.detail.elt || event.target);
    showBusy();
  });

  document.addEventListener("htmx:sseClose", function (event) {
    streaming.delete(event.detail.elt || event.target);
    showBusy();
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt;
    if (busy() && form instanceof HTMLFormElement && form.closest(".chat")) {
      event.preventDefault();
      toast("Wait for the answer to finish.");
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (form && form.id === "composer" && event.detail.successful) {
      form.reset();
      var box = form.querySelector("textarea");
      if (box) { box.style.height = "auto"; box.focus(); }
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target === conversation()) scrollToEnd();
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

  document.addEventListener("DOMContentLoaded", function () {
    if (conversation() && conversation().querySelector(".message")) scrollToEnd();
  });
})();
