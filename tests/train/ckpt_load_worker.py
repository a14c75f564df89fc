"""Subprocess side of the .ckpt fuzz test: load each file named on the command line with
``aotnn.load_checkpoint`` and print one JSON line per file (a "start" line first, flushed, so that a
crash or hang is pinned on the file that caused it)."""
import json
import sys
import warnings


def main(paths):
    from aotnn.train.serialization import load_checkpoint

    warnings.simplefilter("ignore")
    for path in paths:
        print(json.dumps({"start": path}), flush=True)
        try:
            loaded = load_checkpoint(path)
            result = {"path": path, "loaded": sorted(loaded)}
        except Exception as err:  # noqa: BLE001  (the test judges every exception)
            result = {"path": path, "error": type(err).__name__, "message": str(err),
                      "value_or_runtime_error": isinstance(err, (ValueError, RuntimeError))}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
