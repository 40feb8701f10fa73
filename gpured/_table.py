"""The tuning table on disk (``<cache dir>/tuned.json``): gpured.tune()'s
winners per device name, and under ``"_rates"`` the placement model's
measured rates per device name.  Read whole, written whole (to a temporary
name, then renamed)."""
import json
import os

from . import _core

FILE = "tuned.json"


def path():
    return os.path.join(_core.cache_dir(), FILE)


def read():
    """The table, or {} where it is missing or damaged."""
    try:
        with open(path()) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def write(table):
    os.makedirs(os.path.dirname(path()), exist_ok=True)
    tmp = path() + ".%d.tmp" % os.getpid()
    with open(tmp, "w") as f:
        json.dump(table, f, indent=1)
    os.replace(tmp, path())
