"""Where a build writes: a staging folder beside the output, moved into place by a rename.

An existing output path is replaced only when it is an aotnn artifact (a folder whose manifest.json
names the aotnn format); a file, a link or any other folder is refused and left as it is.
"""
from __future__ import annotations

import json
import os

from aotnn_runtime.manifest import FORMAT_NAME, MANIFEST_FILE
from aotnn_runtime.owned_files import create_owned_dir, owned_name, remove_path, remove_stale

BUILD_KIND = ".aotnn-build-"  # a build's staging folder
OLD_KIND = ".aotnn-old-"  # an artifact moved aside while its replacement moves in


def is_artifact(path: str) -> bool:
    """Whether ``path`` is a folder (not a link) holding an aotnn manifest."""
    if os.path.islink(path) or not os.path.isdir(path):
        return False
    try:
        with open(os.path.join(path, MANIFEST_FILE), encoding="utf-8") as stream:
            manifest = json.load(stream)
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT_NAME


def check_output(path: str) -> None:
    """Refuse an output path that exists and is not an aotnn artifact.

    Raises:
        FileExistsError: ``path`` is a file, a link, or a folder without an aotnn manifest.
    """
    if not os.path.lexists(path) or is_artifact(path):
        return
    if os.path.islink(path):
        what = "a symbolic link"
    elif os.path.isdir(path):
        what = f"a directory that is not an aotnn artifact (no aotnn {MANIFEST_FILE})"
    else:
        what = "a file"
    raise FileExistsError(f"output: {path!r} exists and is {what}; aotnn replaces only its own artifacts, "
                          f"so it is left as it is: remove it or choose another output path")


def staging_dir(output_dir: str) -> str:
    """A new empty staging folder beside ``output_dir`` (mode 0777 less the umask).

    Staging folders and moved-aside artifacts that killed builds left in that folder are removed first.

    Raises:
        FileExistsError: ``output_dir`` exists and is not an aotnn artifact.
    """
    check_output(output_dir)
    parent = os.path.dirname(os.path.abspath(output_dir))
    os.makedirs(parent, exist_ok=True)
    remove_stale(parent, [BUILD_KIND, OLD_KIND], untagged=True)
    return create_owned_dir(parent, BUILD_KIND)


def commit_staging(staging: str, output_dir: str) -> None:
    """Move the finished ``staging`` folder to ``output_dir``, replacing an artifact there.

    The old artifact is renamed aside first and removed once the new one is in place, so
    ``output_dir`` holds either artifact whole, never a mixture.

    Raises:
        FileExistsError: ``output_dir`` exists and is not an aotnn artifact.
    """
    check_output(output_dir)
    aside = None
    if os.path.lexists(output_dir):
        aside = os.path.join(os.path.dirname(os.path.abspath(output_dir)), owned_name(OLD_KIND))
        os.rename(output_dir, aside)
    try:
        os.replace(staging, output_dir)
    except BaseException:
        if aside is not None:
            try:
                os.rename(aside, output_dir)
            except OSError:
                pass  # another writer's artifact took the place meanwhile; the aside one is stale now
        raise
    if aside is not None:
        remove_path(aside)
