// Train it yourself in a Python of its own: N steps of each recipe, timed by train_live.speed
async ([recipes, n]) => {
  const py = await readyPython();
  const out = [];
  const speed = "toymodels.one_character.train_live:speed";
  for (const r of recipes) out.push(await py.call(speed, [r, n]));
  return out;
}
