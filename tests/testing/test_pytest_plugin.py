"""The pytest plugin: opt-in collection of tools.d examples as tests."""

from __future__ import annotations

import shutil

import pytest

from tests.support.helpers import ROOT

pytest_plugins = ["pytester"]


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project with a copy of the shipped tools.d (and the Python backend it uses)."""
    shutil.copytree(ROOT / "tools.d", pytester.path / "tools.d")
    shutil.copytree(
        ROOT / "examples", pytester.path / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("WEATHER_API_KEY", "GITHUB_TOKEN", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    return pytester


def test_the_option_collects_every_example_as_a_test(project: pytest.Pytester) -> None:
    result = project.runpytest("--agentkit-tools", "tools.d", "-v")
    result.assert_outcomes(passed=16)
    result.stdout.fnmatch_lines(
        [
            "*tools.d/fetch_weather.yaml::fetch_weather::london PASSED*",
            "*tools.d/github/issues.yaml::get_github_issue::no_such_issue PASSED*",
            "*tools.d/text_stats.yaml::text_stats::top_out_of_range PASSED*",
        ]
    )


def test_the_ini_setting_collects_them_too(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nagentkit_tools = tools.d/github\n")
    result = project.runpytest()
    result.assert_outcomes(passed=8)


def test_without_the_option_nothing_is_collected(project: pytest.Pytester) -> None:
    project.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = project.runpytest("tools.d", "test_plain.py")
    result.assert_outcomes(passed=1)


def test_a_failing_example_fails_with_its_location_and_diff(project: pytest.Pytester) -> None:
    path = project.path / "tools.d" / "forecast.yaml"
    path.write_text(path.read_text().replace("- 5.3\n", "- 9.9\n"))
    result = project.runpytest("--agentkit-tools", "tools.d")
    result.assert_outcomes(passed=15, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*forecast.yaml:49: the output differs:*",
            "-      9.9",
            "+      5.3",
            "FAILED tools.d/forecast.yaml::forecast_daily::berlin_two_days*",
        ]
    )
