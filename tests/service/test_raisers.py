"""Who raised the error a traceback ends with (pure, no DB)."""

from __future__ import annotations

from errkb.service.match.raisers import implicit_error, package_of, raiser_of

ROOTS = frozenset({"sglang"})
SITE = "/opt/venv/lib/python3.10/site-packages"
TRANSFORMERS = f"""Traceback (most recent call last):
  File "{SITE}/sglang/srt/model_loader.py", line 80, in load
    model = AutoModel.from_pretrained(path)
  File "{SITE}/transformers/models/auto/auto_factory.py", line 566, in from_pretrained
    raise ValueError(
ValueError: Unrecognized configuration class
"""
KEY = f"""Traceback (most recent call last):
  File "{SITE}/sglang/srt/runner.py", line 12, in main
    load()
  File "{SITE}/sglang/srt/runner.py", line 290, in load
    method = config["quant_method"]
KeyError: 'quant_method'
"""


def test_an_error_raised_by_another_package_names_it_and_the_last_project_frame() -> None:
    raiser = raiser_of(TRANSFORMERS, ROOTS)
    assert raiser is not None and raiser.package == "transformers"
    assert raiser.frame is not None
    assert (raiser.frame.line, raiser.frame.function) == (80, "load")
    assert TRANSFORMERS[raiser.frame.start : raiser.frame.end].endswith("line 80, in load")
    assert raiser_of(KEY, ROOTS) is None


def test_only_the_last_traceback_counts() -> None:
    chained = TRANSFORMERS + "\nDuring handling...\n" + KEY
    assert raiser_of(chained, ROOTS) is None
    assert raiser_of(KEY + "\n" + TRANSFORMERS, ROOTS) is not None


def test_packages_and_the_standard_library() -> None:
    assert package_of(f"{SITE}/torch/nn/modules/module.py") == "torch"
    assert package_of("/usr/lib/python3.12/json/decoder.py") == "the standard library (json)"
    assert package_of("/home/me/run.py") == ""
    script = 'Traceback (most recent call last):\n  File "/home/me/run.py", line 3, in <module>\n'
    assert raiser_of(script + "KeyError: 'x'\n", ROOTS) is None


def test_an_implicit_error_at_a_project_line() -> None:
    found = implicit_error(KEY, ROOTS)
    assert found is not None
    name, frame = found
    assert (name, frame.line, frame.function) == ("KeyError", 290, "load")
    assert implicit_error(KEY.replace("KeyError", "ValueError"), ROOTS) is None
    assert implicit_error(TRANSFORMERS, ROOTS) is None
