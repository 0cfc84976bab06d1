"""``manage.py evaluate`` end to end: table, JSON, LaTeX, and exit code 2 on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.evalcore.corpus import corpus, variant

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("evaluate")
    base, refs = corpus(seed=12, n_segments=50, n_refs=2)

    def write(name: str, lines: list[str]) -> str:
        path = folder / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(path)

    return {
        "folder": folder,
        "refs": [write("ref.0", refs[0]), write("ref.1", refs[1])],
        "base": [write(f"base.{r}", variant(r, base, refs, 0.2)) for r in range(3)],
        "tuned": [write(f"tuned.{r}", variant(10 + r, base, refs, 0.5)) for r in range(3)],
        "short": write("short", base[:10]),
    }


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_prints_a_multeval_table_and_writes_json_and_latex(files):
    folder = files["folder"]
    out = StringIO()
    call_command(
        "evaluate",
        "--refs",
        *files["refs"],
        "--system",
        "base",
        *files["base"],
        "--system",
        "tuned",
        *files["tuned"],
        "--baseline",
        "base",
        "--metrics",
        "bleu",
        "chrf",
        "ter",
        "length",
        "--resamples",
        "200",
        "--ar-trials",
        "500",
        "--seed",
        "7",
        "--json",
        str(folder / "out.json"),
        "--latex",
        str(folder / "out.tex"),
        stdout=out,
    )
    text = out.getvalue()
    assert text.startswith("n=3")
    assert "BLEU (s_sel/s_opt/p)" in text
    assert "chrF2 (s_sel/s_opt/p)" in text
    assert "BLEU|nrefs:2|bs:200|ar:500|seed:7|" in text
    data = json.loads((folder / "out.json").read_text(encoding="utf-8"))
    assert set(data["metrics"]) == {"bleu", "chrf", "ter", "length"}
    assert set(data["metrics"]["bleu"]) == {"base", "tuned"}
    tuned = data["metrics"]["bleu"]["tuned"]
    assert len(tuned["runs"]) == 3
    assert 0 < tuned["p"] <= 1
    assert data["metrics"]["bleu"]["base"]["p"] is None
    assert set(data["signatures"]) == {"bleu", "chrf", "ter", "length"}
    assert r"\begin{table}" in (folder / "out.tex").read_text(encoding="utf-8")


def test_the_same_seed_gives_the_same_table(files):
    args = [
        "--refs",
        *files["refs"],
        "--system",
        "b",
        *files["base"],
        "--system",
        "t",
        *files["tuned"],
        "--metrics",
        "bleu",
        "--resamples",
        "50",
        "--ar-trials",
        "100",
    ]
    first, second = StringIO(), StringIO()
    call_command("evaluate", *args, stdout=first)
    call_command("evaluate", *args, stdout=second)
    assert first.getvalue() == second.getvalue()


@pytest.mark.parametrize(
    "aliases",
    [
        ["--paired-bs-n", "50", "--paired-ar-n", "100"],
        ["-pbsn", "50", "-parn", "100"],
        ["--confidence-n", "50", "--paired-ar-n", "100"],
        ["-cin", "50", "-parn", "100"],
    ],
)
def test_sacrebleus_flags_are_the_one_count_and_trials_under_other_names(files, aliases):
    common = ["--refs", *files["refs"], "--system", "b", *files["base"], "--system", "t"]
    common += [*files["tuned"], "--metrics", "bleu", "--format", "json"]
    ours, theirs = StringIO(), StringIO()
    call_command("evaluate", *common, "--resamples", "50", "--ar-trials", "100", stdout=ours)
    call_command("evaluate", *common, *aliases, stdout=theirs)
    assert ours.getvalue() == theirs.getvalue()
    settings = json.loads(theirs.getvalue())["settings"]
    assert (settings["resamples"], settings["ar_trials"], settings["seed"]) == (50, 100, 12345)


def test_from_the_shell_it_exits_0_and_needs_no_database(files, tmp_path):
    # A database URL nothing answers (port 9 on localhost), an empty var folder: any query fails.
    env = {
        **os.environ,
        "DATABASE_URL": "postgres://nobody@127.0.0.1:9/nothing?connect_timeout=1",
        "EVALSITE_VAR_DIR": str(tmp_path / "var"),
    }
    result = run(
        "--refs",
        *files["refs"],
        "--system",
        "only",
        files["base"][0],
        "--metrics",
        "bleu",
        "--resamples",
        "20",
        "--ar-trials",
        "20",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "only" in result.stdout
    assert not (tmp_path / "var" / "db.sqlite3").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--system", "a", "missing.txt"], "file not found: missing.txt"),
        (["--system", "a", "SHORT"], "run 1 has 10 lines, the references have 50"),
        (["--system", "a", "BASE", "--metrics", "bleu", "meteor"], "unknown metric meteor"),
        (["--system", "a", "BASE", "--baseline", "zzz"], "baseline 'zzz'"),
        (["--system", "a", "BASE", "--resamples", "many"], "invalid int value"),
    ],
)
def test_bad_input_gives_one_clear_line_on_stderr_and_exit_code_2(files, args, message):
    args = [
        files["short"] if a == "SHORT" else files["base"][0] if a == "BASE" else a for a in args
    ]
    result = run("--refs", *files["refs"], *args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert result.stdout == ""


def test_called_in_process_bad_input_raises_command_error_with_code_2(files):
    with pytest.raises(CommandError) as caught:
        call_command("evaluate", "--refs", *files["refs"], "--system", "a", files["short"])
    assert caught.value.returncode == 2


SACREBLEU_SIGNATURE_METRICS = ("bleu", "chrf", "ter")
SACREBLEU_ARGS = ("-m", *SACREBLEU_SIGNATURE_METRICS, "-w", "6", "-f", "json")


def _sacrebleu_cli(ref: Path, hyp: Path) -> dict[str, float]:
    """sacreBLEU's own command line on the files, at six decimals."""
    done = subprocess.run(
        [sys.executable, "-m", "sacrebleu", str(ref), "-i", str(hyp), *SACREBLEU_ARGS],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return {entry["name"]: float(entry["score"]) for entry in json.loads(done.stdout)}


def _evaluate_one(
    tmp_path: Path, ref_lines: list[str], hyp_lines: list[str], *args: str
) -> tuple[Path, Path, dict[str, Any]]:
    """One reference file and one system's run written line by line (``\\n`` ends a line, any
    other character is written as it is), ``evaluate -f json`` on them: the files and the
    results per metric."""
    ref, hyp = tmp_path / "ref", tmp_path / "hyp"
    ref.write_bytes(("\n".join(ref_lines) + "\n").encode())
    hyp.write_bytes(("\n".join(hyp_lines) + "\n").encode())
    out = StringIO()
    call_command(
        "evaluate", "--refs", str(ref), "--system", "a", str(hyp), "-f", "json", *args, stdout=out
    )
    return ref, hyp, json.loads(out.getvalue())["metrics"]


@pytest.mark.parametrize("in_reference", [True, False])
def test_a_lone_carriage_return_stays_inside_its_line_as_in_sacrebleu(
    tmp_path: Path, in_reference: bool
) -> None:
    """A carriage return not followed by a newline is part of its line for sacreBLEU's command
    line (it opens files with ``newline="\\n"``): ``evaluate`` scores the same segments and the
    same numbers, whether the return sits in a hypothesis and its reference or in the
    hypothesis alone (a file the universal-newline reading refused as one line too long)."""
    base, refs = corpus(seed=5, n_segments=30, n_refs=1)
    hyps = variant(3, base, refs, 0.3)
    ref_lines, hyp_lines = list(refs[0]), list(hyps)
    words = hyp_lines[4].split()
    hyp_lines[4] = " ".join(words[:3]) + "\r" + " ".join(words[3:])
    if in_reference:
        words = ref_lines[4].split()
        ref_lines[4] = " ".join(words[:3]) + "\r" + " ".join(words[3:])
    ref, hyp, ours = _evaluate_one(
        tmp_path, ref_lines, hyp_lines, "--metrics", *SACREBLEU_SIGNATURE_METRICS
    )
    theirs = _sacrebleu_cli(ref, hyp)
    assert round(ours["bleu"]["a"]["mean"], 6) == pytest.approx(theirs["BLEU"], abs=1e-6)
    assert round(ours["chrf"]["a"]["mean"], 6) == pytest.approx(theirs["chrF2"], abs=1e-6)
    assert round(ours["ter"]["a"]["mean"], 6) == pytest.approx(theirs["TER"], abs=1e-6)


@pytest.mark.parametrize(
    ("flags", "metric", "reference"),
    [
        (["-lc"], "bleu", {"lowercase": True}),
        (
            ["--smooth-method", "floor", "--smooth-value", "0.2"],
            "bleu",
            {"smooth_method": "floor", "smooth_value": 0.2},
        ),
        (
            ["--smooth-method", "add-k", "--smooth-value", "2"],
            "bleu",
            {"smooth_method": "add-k", "smooth_value": 2},
        ),
        (["-tok", "char"], "bleu", {"tokenize": "char"}),
        (["-lc"], "chrf", {}),
        (
            ["--chrf-lowercase", "--chrf-whitespace"],
            "chrf",
            {"lowercase": True, "whitespace": True},
        ),
        (
            ["--chrf-char-order", "4", "--chrf-word-order", "2", "--chrf-beta", "1"],
            "chrf",
            {"char_order": 4, "word_order": 2, "beta": 1},
        ),
        (["--chrf-eps-smoothing"], "chrf", {"eps_smoothing": True}),
        (
            ["--ter-case-sensitive", "--ter-no-punct"],
            "ter",
            {"case_sensitive": True, "no_punct": True},
        ),
        (
            ["--ter-normalized", "--ter-asian-support"],
            "ter",
            {"normalized": True, "asian_support": True},
        ),
    ],
)
def test_sacrebleus_options_mean_what_they_mean_in_sacrebleu(
    tmp_path: Path, flags: list[str], metric: str, reference: dict[str, object]
) -> None:
    """Each option under sacreBLEU's flag name gives sacreBLEU's corpus score with the same
    option (its Python API); ``-lc`` lowercases BLEU and not chrF, as in sacreBLEU."""
    import sacrebleu

    base, refs = corpus(seed=9, n_segments=40, n_refs=1)
    hyps = variant(4, base, refs, 0.4)
    hyps = [h.capitalize() + " ," if n % 3 == 0 else h.upper() for n, h in enumerate(hyps)]
    _ref, _hyp, results = _evaluate_one(tmp_path, refs[0], hyps, "--metrics", metric, *flags)
    ours = results[metric]["a"]["runs"][0]
    made = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}[metric]
    theirs = made(**reference).corpus_score(hyps, [refs[0]]).score  # type: ignore[arg-type]
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_a_sentencepiece_tokenizer_without_its_model_names_the_missing_file(
    files, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SACREBLEU", str(tmp_path / "sacrebleu-home"))
    env = {**os.environ, "SACREBLEU": str(tmp_path / "sacrebleu-home")}
    done = run(
        "--refs", files["refs"][0], "--system", "a", files["base"][0], "-tok", "flores101", env=env
    )
    assert done.returncode == 2
    assert "flores101 tokenizer needs its SentencePiece model at" in done.stderr
    assert str(tmp_path / "sacrebleu-home" / "models") in done.stderr
