"""The core's scratch arrays: run_games slices its views by hand, WORK_SPEC documents the layout."""

import inspect
import re

import numpy as np

from spadework.analysis.engine import kernels as K


def test_run_games_views_follow_work_spec():
    src = inspect.getsource(K.run_games.py_func)
    views = {
        m.group(1): (m.group(2), int(m.group(3)), int(m.group(4)), m.group(5))
        for m in re.finditer(r"^    (\w+) = (w[fiu])\[(\d+):(\d+)\](?:\.reshape\((\([^)]*\))\))?$", src, re.M)
    }
    assert set(views) == set(K.WORK_SPEC)
    offset = {"wf": 0, "wi": 0, "wu": 0}
    array_of = {np.float64: "wf", np.int64: "wi", np.uint64: "wu"}
    for name, (shape, dtype) in K.WORK_SPEC.items():
        arr, lo, hi, reshape = views[name]
        assert arr == array_of[dtype], name
        assert (lo, hi) == (offset[arr], offset[arr] + int(np.prod(shape))), name
        assert (eval(reshape) if reshape else None) == (shape if isinstance(shape, tuple) else None), name
        offset[arr] = hi
    assert (offset["wf"], offset["wi"], offset["wu"]) == K.WORK_SIZES


def test_run_games_parameters_are_the_fields():
    params = list(inspect.signature(K.run_games.py_func).parameters)
    assert params == K._RUN_GAMES_ARGS
