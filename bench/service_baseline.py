"""The service benchmark against another git revision: 2-replica PostgreSQL runs in turn.

`service_bench.py --baseline REV` unpacks the `src` of REV and builds that
revision's own store (the same bookings asked in the same order, booked by
its own code in a subprocess: the schema is that revision's, which this
checkout's servers could not serve, nor it theirs). Its `braid serve`
replicas run on copies of that store, this checkout's on copies of its own,
with the same clients and the same requests, runs alternating so that both
see the same machine.

Run as a script, it is that subprocess: `--build-store` with the
revision's source first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from service_store import Sizes, World, copy_rows, make_world, preload

BENCH = Path(__file__).resolve().parent


def build_store(source: Path, world: World, sizes: Sizes, sqlite: Path, postgres: str) -> str:
    """The revision at `source` preloads its SQLite store and copies it to `postgres`.

    Returns the token it stored for the clients.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(source), str(BENCH)])
    command = [
        sys.executable,
        __file__,
        "--build-store",
        f"--sqlite={sqlite}",
        f"--postgres={postgres}",
        f"--bookings={sizes.bookings}",
        f"--seed={sizes.seed}",
        # The booked week starts where this process's does (the hour may turn).
        f"--t0={world.t0}",
    ]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    token: str = json.loads(done.stdout)["token"]
    return token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-store", action="store_true", required=True)
    parser.add_argument("--sqlite", type=Path, required=True)
    parser.add_argument("--postgres", required=True)
    parser.add_argument("--bookings", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--t0", type=int, required=True)
    args = parser.parse_args(argv)
    world = replace(make_world(args.bookings, args.seed), t0=args.t0)
    # Only the bookings and the seed matter to the preload.
    sizes = Sizes(args.bookings, 0, 0, 0, args.seed)
    loaded = preload(f"sqlite:///{args.sqlite}", world, sizes, lambda _: None)
    copy_rows(f"sqlite:///{args.sqlite}", args.postgres)
    print(json.dumps({"token": loaded["token"], "placed": loaded["placed"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
