"""python -m normcore.docs [OUTDIR]: build the documentation site (warnings are errors)."""

import argparse
import sys

from .build import DEFAULT_OUTDIR, DocsBuildError, build


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m normcore.docs",
        description="Build normcore's documentation site (Sphinx, offline, warnings as errors) "
                    "and print where its index.html is.",
        epilog="example: python -m normcore.docs /tmp/normcore-site")
    parser.add_argument("outdir", nargs="?", default=None,
                        help=f"folder to write the HTML into (default: {DEFAULT_OUTDIR})")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only warnings and errors")
    args = parser.parse_args(argv)
    try:
        index = build(args.outdir, quiet=args.quiet)
    except DocsBuildError as err:
        print(f"docs: {err}", file=sys.stderr)
        return 1
    print(f"docs built: open {index}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
