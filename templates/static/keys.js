// Arrow-key movement inside a group marked data-roving (a row of buttons) or
// data-roving="grid" (a table): only one item in a group is in the tab order.

// the group's own items (not those of a group inside it)
function members(group) {
  const own = (el) => el.closest("[data-roving]") === group;
  return [...group.querySelectorAll("[data-fk]")].filter(own);
}

const FOCUSABLE = "button, td, th, a, [tabindex]";
function items(group) {
  return members(group).filter((el) => el.tabIndex !== undefined && el.matches(FOCUSABLE));
}

const MOVES = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };

function target(group, current, key) {
  if (group.dataset.roving === "grid") {
    const rows = [...group.querySelectorAll("tbody tr")]
      .map((tr) => [...tr.querySelectorAll("td[data-fk]")]);
    const r = rows.findIndex((row) => row.includes(current));
    const c = rows[r].indexOf(current);
    const move = MOVES[key];
    if (key === "Home") return rows[r][0];
    if (key === "End") return rows[r][rows[r].length - 1];
    if (!move) return null;
    return rows[r + move[0]]?.[c + move[1]] ?? null;
  }
  const list = items(group);
  const i = list.indexOf(current);
  if (key === "Home") return list[0];
  if (key === "End") return list[list.length - 1];
  if (key === "ArrowRight" || key === "ArrowDown") return list[Math.min(i + 1, list.length - 1)];
  if (key === "ArrowLeft" || key === "ArrowUp") return list[Math.max(i - 1, 0)];
  return null;
}

export function moveFocus(e) {
  const group = e.target.closest("[data-roving]");
  if (!group || e.altKey || e.ctrlKey || e.metaKey) return false;
  const next = target(group, e.target.closest("[data-fk]"), e.key);
  if (!next) return false;
  e.preventDefault();
  for (const el of members(group)) el.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
  return true;
}
