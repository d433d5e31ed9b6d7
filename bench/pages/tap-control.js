// A tap on the control SELECTOR of figure FID, timed to the paint after the figure's redraw (ms)
async ([fid, selector]) => {
  const fig = document.getElementById(fid);
  return await timeToPaint(fig, () => fig.querySelector(selector).click());
}
