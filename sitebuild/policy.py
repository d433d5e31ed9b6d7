"""The Content-Security-Policy every page carries: its own origin only, no inline script,
and 'wasm-unsafe-eval', the least WebAssembly needs (without it Pyodide never starts).

Pages carry it in a <meta> tag so it holds on any static host; `build.py serve` and the
tests also send it as a header, which is what binds the Web Worker (a worker takes its
policy from its own response, not from the page).
"""


def content_security_policy(pyodide_url="pyodide/"):
    """The policy as one header value; a CDN runtime adds that one origin for scripts and
    fetches."""
    extra = ""
    if "://" in pyodide_url:
        origin = "/".join(pyodide_url.split("/")[:3])
        extra = f" {origin}"
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' 'wasm-unsafe-eval'{extra}",
            "worker-src 'self'",
            f"connect-src 'self'{extra}",
            "img-src 'self'",
            "style-src 'self'",
            "font-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
        ]
    )
