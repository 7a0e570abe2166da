"""Parses the logs in crates/swerve-eval/tests/fixtures/swe-smith/parsers/ with SWE-smith's
own log parsers, run from a checkout of its source, and compares the status maps with
parsers.json, which swerve's test (`grading_families::swe_smith_parsers_…`) parses against.

A log `OWNER__NAME[.variant].log` is parsed with SWE-smith's parser for OWNER/NAME
(`MAP_REPO_TO_PARSER`, swesmith/harness/log_parsers.py), `default.log` with its default
(`parse_log_pytest`). SWE-smith's module imports `TestStatus` from the `swebench` package
(PyPI); only its `swebench.harness.constants` is loaded (the package's own `__init__` needs
Docker).

Where the logs come from: gin-gonic__gin.log is SWE-smith's recorded `go test -v` output
(tests/test_logs/test_output, commit cf2e649d); tornadoweb__tornado.log is
`python -m tornado.test --verbose` of tornado from PyPI; un33k__python-slugify.log is
`python -m unittest -v` over python-slugify's tests (with a test made to fail and one to
error); the others are pytest's output with each repository's flags from SWE-smith's specs
(`-rA`; `--verbose -n 2` with pytest-xdist, in the progress and the classic console styles;
`-rA -k`) over a test module with passing, failing, skipped, xfail, erroring and
parametrized tests.

Usage:
    python scripts/swe-smith-crosscheck.py SWE_SMITH_SOURCE_DIR [--write]
(with `pip install --no-deps swebench` in the interpreter). Exit status 1 when a status
map differs from parsers.json (or, with --write, never).
"""

import importlib.util
import json
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/swerve-eval/tests/fixtures/swe-smith/parsers"


def swe_smith_parsers(source_dir):
    spec = importlib.util.find_spec("swebench")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("swe-smith-crosscheck: install the swebench package (pip install --no-deps swebench)")
    package = pathlib.Path(list(spec.submodule_search_locations)[0])
    for name in ("swebench", "swebench.harness"):
        module = types.ModuleType(name)
        module.__path__ = [str(package.parent / name.replace(".", "/"))]
        sys.modules[name] = module
    path = source_dir / "swesmith/harness/log_parsers.py"
    loaded = importlib.util.spec_from_file_location("swe_smith_log_parsers", path)
    module = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(module)
    return module


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if len(args) != 1:
        sys.exit(__doc__)
    parsers = swe_smith_parsers(pathlib.Path(args[0]))
    maps = {}
    for log in sorted(FIXTURES.glob("*.log")):
        if log.name == "default.log":
            parse = parsers.parse_log_pytest
        else:
            repo = log.name.split(".")[0].replace("__", "/")
            parse = parsers.MAP_REPO_TO_PARSER[repo]
        maps[log.name] = dict(sorted(parse(log.read_text()).items()))
    expected_path = FIXTURES / "parsers.json"
    if "--write" in sys.argv:
        expected_path.write_text(json.dumps(maps, indent=1, sort_keys=True) + "\n")
        print(f"wrote {expected_path}: {', '.join(f'{k} ({len(v)})' for k, v in maps.items())}")
        return 0
    expected = json.loads(expected_path.read_text())
    differ = [name for name in sorted(set(maps) | set(expected)) if maps.get(name) != expected.get(name)]
    for name in differ:
        print(f"{name}: SWE-smith's parser gives a different map than parsers.json")
    print(f"{len(maps) - len(differ)} of {len(maps)} logs: SWE-smith's parsers equal parsers.json")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
