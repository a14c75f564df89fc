"""The ``aotnn`` click group, one-line error reporting and progress lines shared by every command."""
from __future__ import annotations

import functools
import itertools
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

_DEBUG = {"on": False}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show the full traceback on errors.")
def main(debug: bool) -> None:
    """aotnn: compile MindSpore-style networks and ONNX models ahead of time with TVM, and run them.

    MODEL is FILE.py:NAME (a Cell class, factory or instance), a module path such as
    aotnn.models:resnet18, or an .onnx file.

    \b
    Examples:
      aotnn compile aotnn.models:lenet5 --input x:1,1,32,32 -o lenet.aot
      aotnn run lenet.aot --input x.npy --output y.npy
      aotnn inspect lenet.aot
      aotnn export aotnn.models:resnet18 --format onnx -o resnet18.onnx
      aotnn compile resnet18.onnx --target aarch64 -o resnet18-arm.aot
    """
    _DEBUG["on"] = debug


def fail(err: BaseException) -> None:
    """Turn ``err`` into one clear line (the trace too with ``--debug``)."""
    if _DEBUG["on"]:
        traceback.print_exception(type(err), err, err.__traceback__)
    message = str(err).strip().splitlines()
    raise click.ClickException(f"{type(err).__name__}: {message[0] if message else ''}".rstrip(": "))


def one_line_errors(command: Callable) -> Callable:
    """Decorator: any exception becomes one clear line (click's own usage errors pass through)."""
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:
            raise click.Abort() from None
        except Exception as err:  # noqa: BLE001  (one line; --debug shows the trace)
            fail(err)
    return wrapper


@contextmanager
def progress(label: str) -> Iterator[None]:
    """Show ``label`` on stderr while the block runs: a spinner with elapsed seconds on a terminal,
    a start line and a done line otherwise."""
    stream = click.get_text_stream("stderr")
    start = time.perf_counter()
    interactive = stream.isatty()
    stop = threading.Event()
    thread = None
    if interactive:
        def spin() -> None:
            for frame in itertools.cycle("|/-\\"):
                if stop.wait(0.1):
                    break
                stream.write(f"\r{frame} {label} {time.perf_counter() - start:5.1f} s")
                stream.flush()
        thread = threading.Thread(target=spin, daemon=True)
        thread.start()
    else:
        click.echo(f"{label} ...", err=True)
    ok = False
    try:
        yield
        ok = True
    finally:
        stop.set()
        if thread is not None:
            thread.join()
            stream.write("\r\033[K")
        elapsed = time.perf_counter() - start
        click.echo(f"{label}: {'done' if ok else 'failed'} in {elapsed:.1f} s", err=True)


def human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
