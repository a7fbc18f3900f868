"""The driver's own finding codes (APX0xx): problems with files rather than with apex usage;
and the rule codes the driver acts on.

Kept apart from the rules so that the command line and the pipeline can name them without
importing LibCST.
"""

from __future__ import annotations

from typing import Dict

PARSE_ERROR = "APX001"
INTERNAL_ERROR = "APX002"
UNREADABLE = "APX003"
READ_ONLY = "APX004"
DIRTY = "APX005"
VENDORED_APEX = "APX006"
UNDECODABLE = "APX007"
WRITE_FAILED = "APX008"
SYMLINK_LOOP = "APX009"
TOO_LARGE = "APX010"
UNUSED_SUPPRESSION = "APX011"
LEGACY_SYNTAX = "APX012"

#: the step rule's finding of a wrapper's step handed the GradScaler: the pipeline edits the
#: wrapper's file where a file reports it (``pipeline._edit_steppable_wrappers``)
HANDED_CODE = "APX315"

DRIVER_CODES: Dict[str, str] = {
    PARSE_ERROR: "The file does not parse under the running Python (e.g. Python 2 syntax, "
    "`.cuda(async=True)`); it is reported with its line and column and left unchanged.",
    INTERNAL_ERROR: "A rule failed on this file or produced code that does not compile; "
    "the file is left unchanged. Please report it; `--ignore` the named codes to go on.",
    UNREADABLE: "The file could not be read (permissions, I/O error).",
    READ_ONLY: "The file would be rewritten but is read-only; it is not written (the tool never changes permissions).",
    DIRTY: "The file has uncommitted changes in git; it is not written so that nothing of "
    "yours is mixed into the migration diff. Commit or stash first, or pass `--allow-dirty`.",
    VENDORED_APEX: "A copy of apex itself (the `apex/` package, or apex's whole source tree with its setup.py, "
    "csrc/, tests and examples: a git submodule, `third_party/apex`) is skipped: nothing in it is migrated. "
    "Once no file outside it imports apex, delete it and the step that installs it; "
    "`--ignore APX006` keeps it without a finding.",
    UNDECODABLE: "The file's bytes do not match its encoding (cookie, BOM or UTF-8); it is left unchanged.",
    WRITE_FAILED: "Writing the rewritten file failed; the original is left intact.",
    SYMLINK_LOOP: "A symbolic link that leads back into a directory already walked is not followed.",
    TOO_LARGE: "The file is larger than `--max-file-size` and imports apex: it is not "
    "rewritten (LibCST needs minutes for a file of several megabytes). Migrate it by hand or "
    "raise the limit. Large files that do not import apex are skipped silently.",
    LEGACY_SYNTAX: "The file did not parse under Python 3 for one of two old-script shapes, and is migrated "
    "repaired: `x.cuda(async=True)` (torch's name before 0.4) becomes `x.cuda(non_blocking=True)`, and "
    "indentation mixing tabs and spaces that Python 3 rejects is expanded at 8 columns a tab, as Python 2 "
    "read it. Each repaired line is reported; strings and comments are never touched. Any other syntax "
    "error keeps APX001.",
    UNUSED_SUPPRESSION: "A suppression comment (`# apexcompat: ignore[APXnnn]`, `# noqa: APXnnn`) silences no "
    "finding on its line; reported only with `--show-unused-suppressions`. Remove the comment.",
}

#: driver codes that leave work to do (exit status 1): the run could not finish a file, a
#: copy of apex is left to delete, or (asked for with --show-unused-suppressions) a
#: suppression comment is stale
BLOCKING = frozenset(
    {
        PARSE_ERROR,
        UNREADABLE,
        READ_ONLY,
        DIRTY,
        VENDORED_APEX,
        UNDECODABLE,
        WRITE_FAILED,
        TOO_LARGE,
        UNUSED_SUPPRESSION,
    }
)
