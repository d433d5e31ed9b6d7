// The LMS's side of a SCORM session, for tests/test_scorm.py: scorm-again's runtime (SCORM 1.2
// or 2004, fetched pinned into the cache, never shipped) installed as the API object of this
// page, the parent frame, and the package's launch page, read from its imsmanifest.xml, opened
// in a frame below it. Every call the package makes is recorded in harness.calls as
// [method, arguments, result]. The test drives it with harness.start({version, data, refuse}):
// DATA is what an LMS kept from an earlier session (flattened CMI, e.g. {"cmi.suspend_data":
// …}); REFUSE makes every SetValue fail with the runtime's "general exception" code.

const METHODS = {
  "1.2": ["LMSInitialize", "LMSFinish", "LMSGetValue", "LMSSetValue", "LMSCommit", "LMSGetLastError", "LMSGetErrorString", "LMSGetDiagnostic"],
  "2004": ["Initialize", "Terminate", "GetValue", "SetValue", "Commit", "GetLastError", "GetErrorString", "GetDiagnostic"],
};
const REFUSED = { "1.2": "101", "2004": "351" }; // General Exception / General Set Failure

const calls = [];

// The launch page of the first item of the default organization.
async function launchPage() {
  const xml = new DOMParser().parseFromString(await (await fetch("pkg/imsmanifest.xml")).text(), "application/xml");
  const orgs = xml.getElementsByTagNameNS("*", "organizations")[0];
  const org = [...orgs.getElementsByTagNameNS("*", "organization")].find((o) => o.getAttribute("identifier") === orgs.getAttribute("default"));
  const item = org.getElementsByTagNameNS("*", "item")[0];
  const resource = [...xml.getElementsByTagNameNS("*", "resource")].find((r) => r.getAttribute("identifier") === item.getAttribute("identifierref"));
  return resource.getAttribute("href");
}

function recorded(api, version, refuse) {
  const facade = {};
  let refusedLast = false;
  for (const method of METHODS[version]) {
    facade[method] = (...args) => {
      let result;
      if (refuse && method.endsWith("SetValue")) {
        result = "false";
        refusedLast = true;
      } else if (refusedLast && method.endsWith("GetLastError")) {
        result = REFUSED[version];
        refusedLast = false;
      } else {
        if (!method.startsWith("LMSGetErrorString") && !method.startsWith("GetErrorString")) refusedLast = false;
        result = api[method](...args);
      }
      calls.push([method, args.map(String), String(result)]);
      return result;
    };
  }
  return facade;
}

async function start({ version, data = null, refuse = false, launch = null }) {
  const Runtime = version === "2004" ? window.Scorm2004API : window.Scorm12API;
  const api = new Runtime({ autocommit: false, logLevel: 4 });
  if (data) api.loadFromFlattenedJSON(data);
  window.harness.api = api;
  window[version === "2004" ? "API_1484_11" : "API"] = recorded(api, version, refuse);
  const page = launch || (await launchPage());
  document.getElementById("sco").src = `pkg/${page}`;
  return page;
}

// The values the runtime holds now, under their SCORM names (read as the LMS reads them, on
// the runtime's data model; an element the runtime keeps write-only, such as 1.2's session
// time, is left out: the calls show what was written to it).
const HELD = {
  "1.2": {
    "cmi.core.lesson_status": (c) => c.core.lesson_status,
    "cmi.core.score.raw": (c) => c.core.score.raw,
    "cmi.core.score.min": (c) => c.core.score.min,
    "cmi.core.score.max": (c) => c.core.score.max,
    "cmi.suspend_data": (c) => c.suspend_data,
  },
  "2004": {
    "cmi.completion_status": (c) => c.completion_status,
    "cmi.score.raw": (c) => c.score.raw,
    "cmi.score.min": (c) => c.score.min,
    "cmi.score.max": (c) => c.score.max,
    "cmi.score.scaled": (c) => c.score.scaled,
    "cmi.progress_measure": (c) => c.progress_measure,
    "cmi.suspend_data": (c) => c.suspend_data,
  },
};

function held(version) {
  const cmi = window.harness.api.cmi;
  return Object.fromEntries(Object.entries(HELD[version]).map(([name, read]) => [name, read(cmi)]));
}

// The LMS closes the package's frame, as it does when the student moves on.
function leave() {
  document.getElementById("sco").remove();
}

window.harness = { calls, start, held, leave, api: null };
