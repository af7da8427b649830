"""python -m normcore.i18n update|check: the catalogs' upkeep (see normcore.i18n.catalogs)."""

import sys

from .catalogs import problems, update


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["update"]:
        for path in update():
            print(f"wrote {path}")
        argv = ["check"]
    if argv[:1] == ["check"]:
        found = problems()
        print("\n".join(found) if found else "every catalog is complete and compiled")
        return 1 if found else 0
    print("usage: python -m normcore.i18n update|check\n"
          "  update  extract the messages, merge them into the .po files, compile the .mo files\n"
          "  check   list untranslated, missing, obsolete or stale messages (exit 1 if any)")
    return 2


if __name__ == "__main__":
    sys.exit(main())
