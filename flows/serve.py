"""Register every worldsmith flow as a deployment with a default schedule and serve them
(what `make ui` starts beside the Prefect server). Runs started from the UI or by a
schedule execute here, in the repo, as subprocesses of this process: schedules pause while
it is down.

Default schedules (change them in the UI, or here): `synth` nightly at 02:00 UTC, `crawl`
weekly on Sunday 03:00 UTC; the stage flows carry a daily schedule that starts paused.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _prefect_env import use_local_server_if_up  # noqa: E402

use_local_server_if_up()

from crawl import crawl  # noqa: E402
from prefect import serve  # noqa: E402
from prefect.schedules import Cron  # noqa: E402
from synth import FLOWS  # noqa: E402

TZ = "UTC"
# deployment name, flow, schedule, whether the schedule starts active
DEPLOYMENTS = [
    ("synth-nightly", FLOWS["synth"], "0 2 * * *", True),
    ("crawl-weekly", crawl, "0 3 * * 0", True),
    *((f"{name}-daily", fl, "0 5 * * *", False) for name, fl in FLOWS.items() if name != "synth"),
]


def deployments():
    return [
        fl.to_deployment(
            name=name,
            schedules=[Cron(cron, timezone=TZ, active=active)],
            tags=["worldsmith"],
            description=(fl.description or "").strip().splitlines()[0] if fl.description else None,
        )
        for name, fl, cron, active in DEPLOYMENTS
    ]


if __name__ == "__main__":
    serve(*deployments(), limit=2)
