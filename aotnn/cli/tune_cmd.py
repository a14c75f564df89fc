"""``aotnn tune``: search faster kernels for a model into a tuning database; ``--merge`` databases."""
from __future__ import annotations

import click

from .app import main, one_line_errors
from .models import example_inputs, load_model


def capture_model(model: str, inputs: tuple[str, ...]):
    """MODEL captured for its input signature: (Relax module, input names)."""
    from aotnn.jit.cell_call import _input_names
    from aotnn.jit.compiled import capture_function

    net = load_model(model, inputs)
    tensors = example_inputs(net, model, inputs)
    names = _input_names(net, len(tensors))
    specs = [(name, t.shape, t.dtype.name) for name, t in zip(names, tensors)]
    mod, _, _, _ = capture_function(lambda *xs: net._construct_with_precision(xs, {}), specs)
    return mod, names


def merge_databases(sources: tuple[str, ...], output: str) -> None:
    import os

    from schedules.tuning.database import TuningDatabase

    for source in sources:
        if not os.path.isdir(source):
            raise click.BadParameter(f"no such tuning database: {source}", param_hint="--merge")
    target = TuningDatabase(output)
    for source in sources:
        added = target.merge_from(TuningDatabase(source, create=False))
        click.echo(f"merged {source}: {added} new records", err=True)
    click.echo(f"wrote {output}: {target.num_records()} records")


@main.command(name="tune")
@click.argument("args", nargs=-1, metavar="MODEL | --merge DB...")
@click.option("--input", "inputs", multiple=True, metavar="NAME:D0,D1,...[:DTYPE]",
              help="Input name, shape and dtype (default float32), once per input.")
@click.option("--target", default="x86", show_default=True, help="Target the kernels are tuned for.")
@click.option("--trials", default=64, show_default=True, type=click.IntRange(0),
              help="Measured candidates in all, counting those already in --db (so a rerun resumes).")
@click.option("--db", "db", type=click.Path(file_okay=False), help="Tuning database directory (created if missing).")
@click.option("--rpc-tracker", metavar="HOST:PORT", help="Time candidates on the RPC servers of this TVM tracker.")
@click.option("--device-key", metavar="KEY", help="The key the RPC servers registered with.")
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), help="Stop after this long even if trials remain.")
@click.option("--batch", type=click.IntRange(1), help="Candidates per search round (default: from --trials).")
@click.option("--strategy", type=click.Choice(["evolutionary", "replay"]), default="evolutionary", show_default=True,
              help="Cost-model guided evolutionary search, or random trace replay.")
@click.option("--threads", type=click.IntRange(1), help="Threads for the search and builds (default: all cores).")
@click.option("--seed", type=int, default=-1, help="Random seed of the search (-1: random).")
@click.option("--merge", "merge", is_flag=True, help="Merge the tuning databases given as arguments into -o.")
@click.option("-o", "--output", type=click.Path(file_okay=False), help="With --merge: the database to write.")
@one_line_errors
def tune_command(args, inputs, target, trials, db, rpc_tracker, device_key, minutes, batch, strategy, threads, seed,
                 merge, output) -> None:
    """Tune MODEL's kernels for TARGET with MetaSchedule and XGBoost; records go to --db.

    Every measurement is saved the moment it is taken: Ctrl-C keeps them, and running the same
    command again resumes (no candidate is measured twice). Tuned kernels replace the default
    schedules only where they measured faster. A convergence plot is written into --db.

    \b
    Examples:
      aotnn tune aotnn.models:resnet18 --trials 400 --db tuned/
      aotnn compile aotnn.models:resnet18 --tuning-db tuned/ -o resnet18.aot
      aotnn tune net.py:Net --input x:1,3,64,64 --db tuned/ \\
          --rpc-tracker 10.0.0.2:9190 --device-key rk3588
      aotnn tune --merge tuned-a/ tuned-b/ -o tuned/
    """
    if merge:
        if not args or not output:
            raise click.UsageError("--merge needs the databases to merge as arguments and -o OUTPUT")
        merge_databases(args, output)
        return
    if len(args) != 1:
        raise click.UsageError("expected one MODEL (or --merge DB... -o OUT)")
    if not db:
        raise click.UsageError("--db DIR is required: where the tuning records are kept")
    if (rpc_tracker is None) != (device_key is None):
        raise click.UsageError("--rpc-tracker and --device-key go together")
    import schedules

    model = args[0]
    click.echo(f"capturing {model} ...", err=True)
    mod, names = capture_model(model, inputs)
    try:
        schedules.tune(mod, names, db=db, target=target, trials=trials, rpc_tracker=rpc_tracker,
                       device_key=device_key, batch=batch, strategy=strategy, num_threads=threads, seed=seed,
                       time_budget=minutes * 60 if minutes else None, model_name=model.rsplit(":", 1)[-1])
    except KeyboardInterrupt:
        raise click.exceptions.Exit(130) from None
