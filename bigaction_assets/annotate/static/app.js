// Keyboard shortcuts: a key presses the button (or ticks the box) marked data-key="<key>".
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const field = event.target;
  if (field instanceof HTMLInputElement && field.type !== "checkbox") return;
  if (field instanceof HTMLTextAreaElement) return;
  const target = document.querySelector(`[data-key="${CSS.escape(event.key)}"]`);
  if (!target) return;
  event.preventDefault();
  target.click();
});
