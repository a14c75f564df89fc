"""``aotnn export``: MODEL -> ONNX, an artifact, or a C bundle."""
from __future__ import annotations

import time

import click

from .app import human_bytes, main, one_line_errors, progress
from .compile_cmd import FORCE_HELP, TARGET_HELP, check_output_free, directory_size
from .models import default_output, example_inputs, load_model, load_weights

_SUFFIX = {"onnx": ".onnx", "aot": ".aot", "bundle": "-bundle.aot"}


@main.command(name="export")
@click.argument("model")
@click.option("--format", "file_format", type=click.Choice(["onnx", "aot", "bundle"], case_sensitive=False),
              default="onnx", show_default=True, help="What to write.")
@click.option("--input", "inputs", multiple=True, metavar="NAME:D0,D1,...[:DTYPE]",
              help="Input name, shape and dtype, once per input (ONNX models: fixes dynamic dimensions).")
@click.option("--target", default="x86", show_default=True, help=TARGET_HELP + " (aot and bundle formats)")
@click.option("--ckpt", type=click.Path(exists=True, dir_okay=False), help="MindSpore .ckpt weights to load.")
@click.option("--opset", type=click.IntRange(17), default=None, help="ONNX opset (default 17).")
@click.option("-o", "--output", help="Output path, exactly (default: NAME.onnx / NAME.aot / NAME-bundle.aot).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@one_line_errors
def export_command(model: str, file_format: str, inputs, target: str, ckpt, opset, output, force: bool) -> None:
    """Export MODEL as ONNX (checked with onnx.checker), an artifact or a C bundle.

    ONNX export translates the captured graph op by op (parameters become initializers under
    their MindSpore names, inputs keep construct's argument names); an op ONNX cannot express
    stops the export with its name.

    \b
    Examples:
      aotnn export aotnn.models:resnet18 --format onnx -o resnet18.onnx
      aotnn export net.py:Net --input x:1,16 --ckpt net.ckpt --format onnx -o net.onnx
      aotnn export aotnn.models:lenet5 --format bundle --target aarch64 -o lenet-arm.aot
    """
    from aotnn.jit.export import export_to_path
    from schedules.output_dir import check_output

    file_format = file_format.lower()
    output = output or default_output(model, _SUFFIX[file_format])
    check_output_free(output, force)
    if file_format != "onnx":
        check_output(output)
    start = time.perf_counter()
    with progress(f"loading {model}"):
        net = load_model(model, inputs)
        load_weights(net, ckpt)
        examples = example_inputs(net, model, inputs)
    with progress(f"exporting {model} as {file_format}"):
        if file_format == "onnx":
            path = export_to_path(net, *examples, path=output, file_format="ONNX", opset=opset)
        else:
            path = export_to_path(net, *examples, path=output, file_format=file_format.upper(), target=target)
    click.echo(f"wrote {path} ({human_bytes(directory_size(path))}) in {time.perf_counter() - start:.1f} s")
